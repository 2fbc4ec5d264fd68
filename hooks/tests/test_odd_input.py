"""Odd and hostile input: trigger data is storable whatever bytes arrived, and every accepted delivery ends.

The rules (docs/webhooks.md, "Odd input"): NUL and lone surrogates become
U+FFFD; JSON with non-finite numbers or nested past MAX_PARSED_DEPTH is kept as its
text; a charset that is no text encoding is ignored (UTF-8, bad bytes
replaced).
"""

import encodings.aliases
import json
import re
from urllib.parse import urlsplit

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from automations import engine
from automations import services as automation_services
from automations.jsonsafe import MAX_PARSED_DEPTH
from automations.models import LookupRow, Run, WebServiceUsage
from hooks import deliveries, services, tasks
from hooks.incoming import Incoming
from hooks.models import Delivery
from hooks.trigger import parse_body, parse_params, trigger_data

DEEP = b"[" * 5000 + b"]" * 5000
JUST_DEEP_ENOUGH = b"[" * MAX_PARSED_DEPTH + b"]" * MAX_PARSED_DEPTH
TOO_DEEP = b"[" * (MAX_PARSED_DEPTH + 1) + b"]" * (MAX_PARSED_DEPTH + 1)
# Every body and content type the issue found stored but never run, and their kin.
HOSTILE = [
    pytest.param(b'{"a": "x\x00y"}', "application/json", id="raw NUL"),
    pytest.param(b'{"a": "x\\u0000y", "\\u0000": 1}', "application/json", id="escaped NUL"),
    pytest.param(b'{"a": "\\ud800"}', "application/json", id="lone surrogate"),
    pytest.param(b'{"a": "\\udfff\\ud800"}', "application/json", id="reversed surrogates"),
    pytest.param(b'{"a": NaN}', "application/json", id="NaN"),
    pytest.param(b'{"a": Infinity, "b": -Infinity}', "application/json", id="Infinity"),
    pytest.param(b"[1e999]", "application/json", id="1e999"),
    pytest.param(DEEP, "application/json", id="nested 5000 deep"),
    pytest.param(b'{"challenge": ' + DEEP + b"}", "application/json", id="deep challenge"),
    pytest.param(b"plain \x00 text", "text/plain", id="NUL in text"),
    pytest.param(b"\xff\xfe\x00\x00", "text/plain", id="not UTF-8"),
    pytest.param(b"abc", "text/plain; charset=hex", id="charset hex"),
    pytest.param(b"abc", "text/plain; charset=base64", id="charset base64"),
    pytest.param(b"abc", "text/plain; charset=rot13", id="charset rot13"),
    pytest.param(b"abc", "text/plain; charset=zlib", id="charset zlib"),
    pytest.param(b"xn--abc\xff", "text/plain; charset=idna", id="charset idna"),
    pytest.param(b"\\ud800 \\x00", "text/plain; charset=unicode_escape", id="charset unicode_escape"),
    pytest.param(b"caf\xe9", 'text/plain; charset="no-such-charset"', id="unknown charset"),
    pytest.param(b"\x00\x01", "text/plain; charset=utf-16", id="utf-16 with NUL"),
]


def storable(data) -> bool:
    """What PostgreSQL's jsonb refuses: NUL, lone surrogates (not UTF-8 at all), NaN and Infinity."""
    text = json.dumps(data, allow_nan=False)
    text.encode("utf-8")
    # An escaped NUL: \u0000 after an even number of backslashes (the text "\\u0000" is a backslash, then u0000).
    return re.search(r"(?<!\\)(?:\\\\)*\\u0000", text) is None


@pytest.mark.parametrize(("body", "content_type"), HOSTILE)
def test_trigger_data_is_storable_whatever_the_body(body, content_type):
    assert storable(trigger_data(body=body, content_type=content_type, query_string="a=%00&b=%ED%A0%80", path="/x"))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"a": "x\\u0000y", "\\u0000": 1}', {"a": "x\ufffdy", "\ufffd": 1}),
        (b'{"a": "\\ud800\\ud83d\\ude00"}', {"a": "\ufffd\U0001f600"}),  # a valid pair is kept
        (b'{"a": NaN}', '{"a": NaN}'),
        (b"[1e999]", "[1e999]"),
        (b"[1e308, 1]", [1e308, 1]),
        (b"plain \x00 text", "plain \ufffd text"),
    ],
)
def test_odd_values_become_the_documented_replacements(body, expected):
    assert parse_body(body, "application/json") == expected


def test_json_nested_past_the_limit_is_kept_as_its_text():
    assert isinstance(parse_body(JUST_DEEP_ENOUGH, ""), list)
    assert parse_body(TOO_DEEP, "") == TOO_DEEP.decode()
    assert parse_body(DEEP, "") == DEEP.decode()


@pytest.mark.parametrize(
    "charset", ["hex", "base64", "rot13", "zlib", "bz2", "uu", "quopri", "idna", "punycode", "undefined"]
)
def test_a_charset_that_is_no_text_encoding_reads_as_utf8_with_bad_bytes_replaced(charset):
    assert parse_body(b"caf\xc3\xa9 \xff", f"text/plain; charset={charset}") == "caf\u00e9 \ufffd"


def test_query_parameters_with_nul_are_storable():
    assert parse_params("a=%00&b=x%00y") == {"a": "\ufffd", "b": "x\ufffdy"}


RECORD = [
    {
        "id": "copy",
        "kind": "set_values",
        "values": {
            "body": "{{trigger.body}}",
            "params": "{{trigger.params}}",
            "text": "{{trigger.body}} {{trigger.query_string}}",
        },
    },
    {"id": "keep", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"body": "{{trigger.body}}"}},
]


def accept(automation, body: bytes, content_type: str = "", query: str = "") -> Delivery:
    accepted = services.accept_delivery(
        automation_id=automation.pk, incoming=Incoming("POST", "/automation-{key}", query, content_type, body)
    )
    return Delivery.objects.get(pk=accepted.pk)


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "content_type"), HOSTILE)
def test_every_hostile_delivery_runs(make_automation, body, content_type):
    automation = make_automation(RECORD)
    delivery = accept(automation, body, content_type, query="a=%00&b=%ED%A0%80")
    deliveries.process_delivery(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.error) == (Delivery.Status.DONE, "")
    assert delivery.run.status == Run.Status.SUCCEEDED
    assert LookupRow.objects.count() == 1


def three_deliveries_the_first_of_which_raises(automation, monkeypatch) -> list[int]:
    ids = [accept(automation, b'{"n": %d}' % n).pk for n in range(3)]
    real = deliveries.process_delivery

    def raising_for_the_first(*, delivery_id):
        if delivery_id == ids[0]:
            raise RuntimeError("the database went away")
        real(delivery_id=delivery_id)

    monkeypatch.setattr(deliveries, "process_delivery", raising_for_the_first)
    return ids


@pytest.mark.django_db
def test_deliveries_sent_together_all_run_when_one_of_them_cannot_become_its_run(make_automation, monkeypatch):
    automation = make_automation(RECORD, settings={"suppress_duplicates": False})
    ids = [accept(automation, b'{"n": %d}' % n).pk for n in range(3)]
    real = deliveries.trigger_data

    def raising_for_the_first(*, body, **kwargs):
        if body == b'{"n": 0}':
            raise RuntimeError("a fault of ours")
        return real(body=body, **kwargs)

    monkeypatch.setattr(deliveries, "trigger_data", raising_for_the_first)
    tasks.process_deliveries(ids)  # together, then each alone: only the faulty one fails
    stored = Delivery.objects.order_by("pk")
    assert [(d.status, d.run.status) for d in stored] == [("failed", "failed"), ("done", "succeeded")] + [
        ("done", "succeeded")
    ]


@pytest.mark.django_db
def test_deliveries_sent_together_all_run_when_one_of_their_runs_raises(make_automation, monkeypatch):
    automation = make_automation(RECORD, settings={"suppress_duplicates": False})
    ids = [accept(automation, b'{"n": %d}' % n).pk for n in range(3)]
    real = deliveries.runs.resume

    def raising_for_the_first(run_id, **kwargs):
        if run_id == min(Run.objects.values_list("pk", flat=True)):
            raise RuntimeError("the database went away")
        return real(run_id, **kwargs)

    monkeypatch.setattr(deliveries.runs, "resume", raising_for_the_first)
    tasks.process_deliveries(ids)
    statuses = list(Run.objects.order_by("pk").values_list("status", flat=True))
    assert statuses == ["waiting", "succeeded", "succeeded"]  # the first is still queued: the sweeper finds it


@pytest.mark.django_db
def test_replay_goes_on_past_a_delivery_that_raises(make_automation, monkeypatch):
    automation = make_automation(RECORD, enabled=False, settings={"suppress_duplicates": False})
    three_deliveries_the_first_of_which_raises(automation, monkeypatch)
    automation.enabled = True
    automation.save()
    assert deliveries.replay_kept(automation_id=automation.pk) == 3
    assert list(Delivery.objects.order_by("pk").values_list("status", flat=True)) == ["pending", "done", "done"]


CHARSETS = sorted(
    {
        *encodings.aliases.aliases.values(),
        "hex",
        "base64",
        "rot13",
        "zlib",
        "bz2",
        "uu",
        "quopri",
        "idna",
        "punycode",
        "undefined",
        "unicode_escape",
        "raw_unicode_escape",
        "utf-7",
        "utf-16",
        "utf-32",
    }
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)
bodies = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=100).map(lambda text: text.encode("utf-8", "surrogatepass")),
    json_values.map(lambda value: json.dumps(value).encode()),  # NaN and Infinity included
    st.sampled_from([param.values[0] for param in HOSTILE]),
    st.integers(min_value=1, max_value=3000).map(lambda depth: b"[" * depth + b"]" * depth),
)
content_types = st.one_of(
    st.sampled_from(["", "application/json", "text/plain", "application/x-www-form-urlencoded"]),
    st.sampled_from(CHARSETS).map(lambda charset: f"text/plain; charset={charset}"),
    st.text(max_size=40).map(lambda junk: f"text/plain; charset={junk}"),
    st.text(max_size=60),
)
query_strings = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(["a=1", "a=%00", "%00=%00", "b=%ED%A0%80", "c=%FF", "d", "=", "&", "e=%", "f=%zz"])).map(
        "&".join
    ),
)


@pytest.mark.django_db
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(body=bodies, content_type=content_types, query=query_strings)
def test_every_delivery_of_any_bytes_ends(make_automation, body, content_type, query):
    """Fuzz: whatever arrives is accepted, stored, and ends (here: runs), on the database the suite is given."""
    automation = make_automation(RECORD, settings={"suppress_duplicates": False, "retries": {"max_attempts": 1}})
    delivery = accept(automation, body, content_type, query)
    deliveries.process_delivery(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.DONE, delivery.error
    assert storable(delivery.run.trigger)


def service_path(automation) -> str:
    return urlsplit(automation_services.web_service_url(automation)).path


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "content_type"), HOSTILE)
def test_a_web_service_answers_any_body_with_valid_json(web_client, make_automation, body, content_type):
    """Through the application gunicorn serves: Django's test client builds its request with Django's own class."""
    automation = make_automation(
        [{"id": "r", "kind": "respond", "body": {"got": "{{trigger.body}}", "q": "{{trigger.params}}"}}]
    )
    response = web_client.generic("POST", service_path(automation) + "?a=%00", data=body, content_type=content_type)
    assert response.status_code == 200
    json.loads(response.content)  # NaN or Infinity would not parse
    assert Run.objects.get().status == Run.Status.SUCCEEDED
    assert WebServiceUsage.objects.get().calls == 1


@pytest.mark.django_db
def test_a_web_service_call_that_fails_on_our_side_gives_its_quota_back(make_automation, monkeypatch):
    automation = make_automation([{"id": "r", "kind": "respond", "body": "hi"}])

    def advance_that_raises(run, **kwargs):
        raise RuntimeError("a fault of ours")

    monkeypatch.setattr(engine, "advance", advance_that_raises)
    response = Client(raise_request_exception=False).post(
        service_path(automation), data=b"{}", content_type="application/json"
    )
    assert response.status_code == 500
    assert WebServiceUsage.objects.get().calls == 0
    assert Run.objects.values_list("status", "error").get() == (Run.Status.FAILED, "internal error")
    monkeypatch.undo()
    assert Client().post(service_path(automation)).status_code == 200
    assert WebServiceUsage.objects.get().calls == 1


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["a\r\nInjected: 1", "a\nb", "\u2603", "x\x00"])
def test_a_respond_header_filled_with_what_http_cannot_send_fails_the_run_instead_of_a_500(
    web_client, make_automation, value
):
    automation = make_automation([{"id": "r", "kind": "respond", "headers": {"X-Echo": "{{trigger.body.echo}}"}}])
    response = web_client.post(
        service_path(automation), data=json.dumps({"echo": value}), content_type="application/json"
    )
    assert response.status_code == 500
    assert response.json()["error"] == "the automation failed"
    assert "Injected" not in response
    run = Run.objects.get()
    assert (run.status, run.error) == (
        Run.Status.FAILED,
        "step r: header 'X-Echo' cannot be sent: its name or value has characters HTTP does not allow",
    )


@pytest.mark.django_db
def test_a_large_body_becomes_its_run_alone_and_the_batch_keeps_its_order(make_automation, monkeypatch):
    automation = make_automation(RECORD, settings={"suppress_duplicates": False})
    monkeypatch.setattr(deliveries, "BATCHED_BODY_BYTES", 10)
    ids = [accept(automation, body).pk for body in (b'{"n": 1}', b'{"n": 2, "pad": "........"}', b'{"n": 3}')]
    with CaptureQueriesContext(connection) as queries:
        tasks.process_deliveries(ids)
    inserts = [query["sql"] for query in queries if query["sql"].startswith(f'INSERT INTO "{Run._meta.db_table}"')]
    assert len(inserts) == 3  # the small one before, the large one alone, the small one after: in order
    assert [row.data["body"]["n"] for row in LookupRow.objects.order_by("pk")] == [1, 2, 3]


@pytest.mark.django_db
def test_a_duplicate_in_the_same_message_is_suppressed_once_the_first_succeeded(make_automation):
    automation = make_automation(RECORD)
    ids = [accept(automation, body).pk for body in (b'{"n": 1}', b'{"n": 2}', b'{"n": 1}')]
    tasks.process_deliveries(ids)
    stored = list(Delivery.objects.order_by("pk").values_list("status", flat=True))
    assert stored == ["done", "done", "suppressed"]
    assert sorted(row.data["body"]["n"] for row in LookupRow.objects.all()) == [1, 2]
