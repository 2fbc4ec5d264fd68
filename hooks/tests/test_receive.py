"""Webhook URLs (SPEC 4.2, 7.2): every method, the handshakes, misses, size limit and maintenance."""

import json
from urllib.parse import urlsplit

import pytest

from automations import services as automation_services
from hooks import answers, intake
from hooks.models import Delivery, Maintenance

# Rows are stored as in production: by the writer thread, on a connection of its own.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client(hooks_client):
    """Webhooks are answered by one driver, the hooks process's handler (hooks/asgi.py)."""
    return hooks_client


def hook_path(automation, prefix="/"):
    path = urlsplit(automation_services.hook_url(automation)).path
    return path if prefix == "/" else path.replace("/automation-", prefix + "automation-")


@pytest.fixture
def automation(make_automation):
    return make_automation([{"id": "keep", "kind": "set_values", "values": {"email": "{{trigger.body.email}}"}}])


@pytest.mark.parametrize("method", ["get", "post", "put"])
@pytest.mark.parametrize("prefix", ["/", "/webhook/"])
def test_it_accepts_get_post_and_put_with_an_empty_200(client, automation, method, prefix):
    response = client.generic(
        method.upper(),
        hook_path(automation, prefix) + "?a=1",
        data=b'{"email": "x@example.com"}',
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.content == b""
    delivery = Delivery.objects.get()
    assert delivery.automation == automation
    assert response["X-Flowgate-Delivery-Id"] == str(delivery.public_id)
    assert response["Access-Control-Allow-Origin"] == "*"
    stored = (delivery.method, delivery.query_string, bytes(delivery.body))
    assert stored == (method.upper(), "a=1", b'{"email": "x@example.com"}')
    assert delivery.status == Delivery.Status.PENDING  # committed before the 200


def test_an_accepted_delivery_is_queued_and_runs(client, automation, eager_tasks):
    from django.db import connection

    if connection.vendor == "sqlite":
        pytest.skip("the in-memory test database locks tables between the threads (production's file does not)")
    assert client.post(hook_path(automation), data=b'{"n": 1}', content_type="application/json").status_code == 200
    intake.stop()  # the writer sends what it committed before it ends
    assert Delivery.objects.get().status == Delivery.Status.DONE


def test_head_is_empty_and_starts_nothing(client, automation):
    response = client.head(hook_path(automation))
    assert (response.status_code, response.content) == (200, b"")
    assert not Delivery.objects.exists()


def test_options_is_a_cors_preflight_and_starts_nothing(client, automation):
    response = client.options(
        hook_path(automation),
        HTTP_ORIGIN="https://sender.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type, x-signature",
    )
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "POST" in response["Access-Control-Allow-Methods"]
    assert response["Access-Control-Allow-Headers"] == "content-type, x-signature"
    assert "Access-Control-Allow-Credentials" not in response
    assert not Delivery.objects.exists()


@pytest.mark.parametrize("method", ["patch", "delete", "trace"])
def test_other_methods_get_405(client, automation, method):
    response = client.generic(method.upper(), hook_path(automation))
    assert response.status_code == 405
    assert "POST" in response["Allow"]
    assert not Delivery.objects.exists()


def test_it_echoes_the_hook_secret_without_a_run(client, automation):
    response = client.post(
        hook_path(automation), data=b"{}", content_type="application/json", HTTP_X_HOOK_SECRET="s3cr3t"
    )
    assert response.status_code == 200
    assert response["X-Hook-Secret"] == "s3cr3t"
    assert not Delivery.objects.exists()


def test_it_echoes_a_challenge_without_a_run(client, automation):
    response = client.post(
        hook_path(automation), data=json.dumps({"challenge": "abc123"}), content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json() == {"challenge": "abc123"}
    assert not Delivery.objects.exists()


def test_a_body_with_a_challenge_and_more_is_an_ordinary_delivery(client, automation):
    response = client.post(
        hook_path(automation), data=json.dumps({"challenge": "abc", "type": "x"}), content_type="application/json"
    )
    assert response.status_code == 200 and response.content == b""
    assert Delivery.objects.count() == 1


def lookalikes(path):
    key = path.split("automation-", 1)[1]
    return [
        path[:-1],  # incomplete
        path + "x",  # extended
        path[:-1] + ("A" if path[-1] != "A" else "B"),  # altered
        path.replace(key, key.upper()) if key != key.upper() else path + "Z",
        "/automation-" + "A" * len(key),  # well-formed, unknown
        "/automation-",
        "/automation-" + key + "/",
        "/automation-%00" + key,
    ]


def test_unknown_altered_and_incomplete_keys_get_the_same_404(client, automation):
    for path in lookalikes(hook_path(automation)):
        response = client.post(path, data=b"{}", content_type="application/json")
        assert (response.status_code, response.content) == (404, b""), path
    assert not Delivery.objects.exists()


def test_a_deleted_automation_answers_404(client, automation):
    path = hook_path(automation)
    automation_services.delete_automation(automation=automation)
    assert client.post(path, data=b"{}", content_type="application/json").status_code == 404


def test_a_body_over_the_limit_gets_413_and_is_not_kept(client, automation, settings):
    settings.HOOK_MAX_BODY_BYTES = 1000
    assert client.post(hook_path(automation), data=b"x" * 1000, content_type="text/plain").status_code == 200
    response = client.post(hook_path(automation), data=b"x" * 1001, content_type="text/plain")
    assert response.status_code == 413
    assert Delivery.objects.count() == 1


def test_a_declared_length_over_the_limit_is_refused_before_reading(client, automation, settings):
    settings.HOOK_MAX_BODY_BYTES = 1000

    class Unreadable:
        def read(self, *args):
            raise AssertionError("the body was read")

        readline = read

    response = client.post(
        hook_path(automation), content_type="text/plain", CONTENT_LENGTH="5000000", **{"wsgi.input": Unreadable()}
    )
    assert response.status_code == 413


def test_maintenance_mode_answers_503_from_the_setting_or_the_admin_switch(client, automation, settings):
    from hooks import maintenance

    settings.MAINTENANCE_MODE = True
    assert client.post(hook_path(automation)).status_code == 503
    settings.MAINTENANCE_MODE = False
    Maintenance.objects.create(active=True)
    maintenance.reset()
    assert client.post(hook_path(automation)).status_code == 503
    assert client.post("/automation-unknown").status_code == 503
    Maintenance.objects.update(active=False)
    maintenance.reset()
    assert client.post(hook_path(automation)).status_code == 200


def test_deliveries_to_an_automation_that_is_off_are_kept(client, make_automation, eager_tasks):
    automation = make_automation([], enabled=False)
    assert client.post(hook_path(automation), data=b"1", content_type="text/plain").status_code == 200
    intake.stop()  # its task has run, seen the automation off, and left the delivery kept
    assert Delivery.objects.get().status == Delivery.Status.PENDING


def test_a_key_remembered_from_before_a_delete_still_gets_404(client, automation):
    path = hook_path(automation)
    assert client.post(path, data=b"1", content_type="text/plain").status_code == 200
    automation_services.delete_automation(automation=automation)
    assert client.post(path, data=b"2", content_type="text/plain").status_code == 404
    assert not Delivery.objects.exists()


class Leaving:
    """A wsgi.input whose client left: the bytes it sent, then the end of the stream (or a reset)."""

    def __init__(self, sent: bytes, *, reset: bool = False):
        self.sent, self.reset = sent, reset

    def read(self, size=-1):
        if not self.sent and self.reset:
            raise ConnectionResetError("connection reset by peer")
        data, self.sent = (self.sent, b"") if size is None or size < 0 else (self.sent[:size], self.sent[size:])
        return data

    readline = read


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_it_refuses_a_cut_off_body(client, automation, reset):
    response = client.post(
        hook_path(automation),
        content_type="application/json",
        CONTENT_LENGTH="1000",
        **{"wsgi.input": Leaving(b'{"email": "x@example.com", "padding": "xxx', reset=reset)},
    )
    assert (response.status_code, response.content) == (400, b"")
    assert not Delivery.objects.exists()


def test_a_challenge_too_deep_to_parse_is_an_ordinary_delivery(client, automation):
    deep = b'{"challenge": ' + b"[" * 2000 + b"]" * 2000 + b"}"
    response = client.post(hook_path(automation), data=deep, content_type="application/json")
    assert (response.status_code, response.content) == (200, b"")
    assert bytes(Delivery.objects.get().body) == deep


@pytest.mark.parametrize("challenge", [b"NaN", b"Infinity", b"-Infinity", b"1e999", b'"\\ud800"', b'["a\\udfff"]'])
def test_a_challenge_without_a_strict_json_form_is_an_ordinary_delivery(client, automation, challenge):
    body = b'{"challenge": ' + challenge + b"}"
    response = client.post(hook_path(automation), data=body, content_type="application/json")
    assert (response.status_code, response.content) == (200, b"")
    assert bytes(Delivery.objects.get().body) == body


def test_a_challenge_is_echoed_as_utf8_json(client, automation):
    response = client.post(
        hook_path(automation), data=b'{"challenge": "caf\\u00e9 \\ud83d\\ude00"}', content_type="application/json"
    )
    assert response.status_code == 200
    assert json.loads(response.content.decode("utf-8")) == {"challenge": "caf\u00e9 \U0001f600"}
    assert not Delivery.objects.exists()


class Unread:
    def read(self, *args):
        raise AssertionError("the body was read")

    readline = read


@pytest.mark.parametrize(
    "framing",
    [{"CONTENT_LENGTH": "26000000"}, {"HTTP_TRANSFER_ENCODING": "chunked"}],
    ids=["declared 26 MB", "chunked"],
)
def test_a_remembered_key_of_a_deleted_automation_gets_404_before_a_large_body_is_read(client, automation, framing):
    path = hook_path(automation)
    assert client.post(path, data=b"1", content_type="text/plain").status_code == 200  # now remembered
    automation_services.delete_automation(automation=automation)
    response = client.post(path, content_type="application/json", **framing, **{"wsgi.input": Unread()})
    assert (response.status_code, response.content) == (404, b"")


@pytest.mark.parametrize(
    "framing",
    [{"CONTENT_LENGTH": "26000000"}, {"HTTP_TRANSFER_ENCODING": "chunked"}],
    ids=["declared 26 MB", "chunked"],
)
def test_that_404_costs_one_lookup_as_any_miss_does(hooks_client, automation, framing, monkeypatch):
    """One fresh lookup in the driver, and that lookup is one query (counted here: the driver asks a thread)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from hooks import selectors

    path = hook_path(automation)
    assert hooks_client.post(path, data=b"1", content_type="text/plain").status_code == 200  # now remembered
    automation_services.delete_automation(automation=automation)
    asked, lookup = [], selectors.automation_id_for_hook_key
    monkeypatch.setattr(selectors, "automation_id_for_hook_key", lambda *args: asked.append(args) or lookup(*args))
    response = hooks_client.post(path, content_type="application/json", **framing, **{"wsgi.input": Unread()})
    assert (response.status_code, [fresh for _key, fresh in asked]) == (404, [True])
    with CaptureQueriesContext(connection) as queries:
        assert lookup(*asked[0]) is None
    assert len(queries) == 1


def test_a_remembered_key_still_takes_a_large_body(client, automation):
    path = hook_path(automation)
    assert client.post(path, data=b"1", content_type="text/plain").status_code == 200
    large = b"x" * (answers.FRESH_LOOKUP_ABOVE_BYTES + 1)
    assert client.post(path, data=large, content_type="text/plain").status_code == 200
    assert Delivery.objects.filter(body=large).exists()


@pytest.mark.parametrize(
    "body", [b'{"\\u0063hallenge": "abc123"}', b" " * 2000 + b'{"challenge": "abc123"}', b'{"challenge":"abc123"}\n']
)
def test_a_challenge_however_spelled_in_json_is_echoed(client, automation, body):
    response = client.post(hook_path(automation), data=body, content_type="application/json")
    assert response.status_code == 200 and json.loads(response.content) == {"challenge": "abc123"}
    assert not Delivery.objects.exists()
