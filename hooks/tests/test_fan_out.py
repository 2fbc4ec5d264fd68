"""A connection's URL and an app's shared endpoint: stored before the 200, fanned out by a worker in one transaction.

docs/connections.md, "App triggers: per connected account and shared endpoint". Requests go through the hooks
process's handler (config.asgi) and the writer; the worker's part is called here as the task calls it.
"""

import json
from urllib.parse import urlsplit

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from automations import services as automation_services
from automations.models import LookupRow, Run
from catalog.models import App
from conftest import app_doc
from connections import routing
from connections import services as connection_services
from connections.models import Connection
from edge import bodies
from hooks import deliveries, endpoints, intake, selectors
from hooks.models import Delivery
from hooks.tests.app_triggers import app_trigger, connect, listening, make_trigger_apps, only_when
from hooks.tests.test_odd_input import HOSTILE
from publickeys.models import PublicKey
from publickeys.redaction import redact

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def apps(make_catalog):
    return make_trigger_apps(make_catalog)


def path_of(url: str) -> str:
    return urlsplit(url).path


def post(client, path, body, **headers):
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(path, data=content, content_type="application/json", **headers)


def work(sent):
    """What the worker does with every message the intake sent, in order."""
    intake.stop()  # the writer sends what it holds
    while sent:
        deliveries.process_deliveries(delivery_ids=sent.pop(0))


def test_a_connection_gets_its_own_url_only_when_its_app_has_a_per_connection_trigger(apps, owner):
    crm, chat = connect(owner, apps["acorn-crm"]), connect(owner, apps["birch-chat"])
    url = endpoints.connection_url(crm)
    assert url.startswith("http") and "/connection-" in url
    assert endpoints.connection_url(crm) == url  # issued once
    assert endpoints.connection_url(chat) is None
    assert endpoints.app_url(apps["birch-chat"]).split("/app-")[1]
    assert endpoints.app_url(apps["acorn-crm"]) is None
    key = url.split("/connection-")[1]
    assert (
        not PublicKey.objects.filter(digest=key).exists() and not PublicKey.objects.filter(sealed=key).exists()
    )  # a key is a password: kept as its digest
    crm.delete()
    assert not PublicKey.objects.filter(purpose="connection_hook").exists()  # its key went with it


def test_a_connection_delivery_runs_every_automation_on_it_once_each_with_its_own_condition(
    apps, owner, make_automation, hooks_client, sent_deliveries
):
    crm = connect(owner, apps["acorn-crm"])
    other = connect(owner, apps["acorn-crm"], label="Other team")
    ten = [listening(owner, crm, "new_lead", only_when(n), name=f"Leads {n}") for n in range(10)]
    by_hand = listening(owner, crm, "by_hand", only_when(0), name="Manual mode")  # not this URL's
    elsewhere = listening(owner, other, "new_lead", only_when(0), name="Other connection")
    response = post(hooks_client, path_of(endpoints.connection_url(crm)), {"n": 5})
    assert response.status_code == 200 and response.content == b""
    parent = Delivery.objects.get(public_id=response["X-Flowgate-Delivery-Id"])
    assert (parent.automation, parent.connection, parent.status) == (None, crm, "pending")  # stored before the 200
    assert parent.path == "/connection-{key}"
    work(sent_deliveries)
    parent.refresh_from_db()
    assert parent.status == "done"
    runs = Run.objects.filter(status__in=("succeeded", "stopped"))
    assert sorted(runs.values_list("automation_id", flat=True)) == sorted(a.pk for a in ten)
    assert not Run.objects.filter(automation__in=[by_hand, elsewhere]).exists()
    # Each filtered with its own condition: n=5 passes the conditions of 0 to 4.
    assert sorted(row.table for row in LookupRow.objects.all()) == [f"seen-{n}" for n in range(5)]
    copies = Delivery.objects.filter(automation__isnull=False)
    assert copies.count() == 10 and set(copies.values_list("status", flat=True)) == {"done"}
    assert all(run.trigger["body"] == {"n": 5} for run in Run.objects.all())


def test_an_automation_that_is_off_keeps_its_copy_and_runs_it_when_turned_on(
    apps, owner, hooks_client, sent_deliveries
):
    crm = connect(owner, apps["acorn-crm"])
    on = listening(owner, crm, "new_lead", only_when(0), name="On")
    off = listening(owner, crm, "new_lead", only_when(0), name="Off", enabled=False)
    for n in (1, 2):
        assert post(hooks_client, path_of(endpoints.connection_url(crm)), {"n": n}).status_code == 200
    work(sent_deliveries)
    assert Run.objects.filter(automation=on).count() == 2 and not Run.objects.filter(automation=off).exists()
    kept = Delivery.objects.filter(automation=off)
    assert list(kept.values_list("status", flat=True)) == ["pending", "pending"]
    deliveries.queue_pending()  # the sweeper leaves an automation that is off alone
    automation_services.turn_on(automation=off)
    deliveries.replay_kept(automation_id=off.pk)
    assert [run.trigger["body"]["n"] for run in Run.objects.filter(automation=off).order_by("pk")] == [1, 2]


def test_duplicate_suppression_is_each_automations_own(apps, owner, hooks_client, sent_deliveries):
    crm = connect(owner, apps["acorn-crm"])
    suppressing = listening(owner, crm, "new_lead", only_when(0), name="Suppresses")
    not_suppressing = listening(
        owner, crm, "new_lead", only_when(0), name="Runs all", settings={"suppress_duplicates": False}
    )
    path = path_of(endpoints.connection_url(crm))
    assert post(hooks_client, path, {"n": 1}).status_code == 200
    work(sent_deliveries)
    assert post(hooks_client, path, {"n": 1}).status_code == 200
    work(sent_deliveries)
    assert Run.objects.filter(automation=suppressing).count() == 1
    assert Delivery.objects.filter(automation=suppressing, status="suppressed").count() == 1
    assert Run.objects.filter(automation=not_suppressing).count() == 2


def test_a_fan_out_that_fails_midway_rolls_back_and_runs_each_automation_once_when_taken_again(
    apps, owner, hooks_client, sent_deliveries, monkeypatch
):
    crm = connect(owner, apps["acorn-crm"])
    ten = [listening(owner, crm, "new_lead", only_when(0), name=f"L{n}") for n in range(10)]
    assert post(hooks_client, path_of(endpoints.connection_url(crm)), {"n": 1}).status_code == 200
    queue_all = deliveries.runs.queue_all

    def lost(wanted, **kwargs):
        queue_all(wanted[:5], **kwargs)  # half the runs written in the transaction: then the worker is gone
        raise deliveries.OperationalError("the worker was lost")

    monkeypatch.setattr(deliveries.runs, "queue_all", lost)
    intake.stop()
    work(list(sent_deliveries))
    assert not Run.objects.exists() and Delivery.objects.get().status == "pending"  # all rolled back
    monkeypatch.undo()
    work(sent_deliveries)
    assert sorted(Run.objects.values_list("automation_id", flat=True)) == sorted(a.pk for a in ten)


def test_the_sweeper_queues_a_delivery_no_worker_fanned_out(apps, owner, hooks_client, sent_deliveries, settings):
    settings.DELIVERY_SWEEP_SECONDS = 0
    crm = connect(owner, apps["acorn-crm"])
    automation = listening(owner, crm, "new_lead", only_when(0))
    assert post(hooks_client, path_of(endpoints.connection_url(crm)), {"n": 1}).status_code == 200
    sent_deliveries.clear()  # the message was lost with its broker
    swept = []
    monkey = deliveries.tasks.process_deliveries
    original = monkey.delay
    monkey.delay = swept.append
    try:
        assert deliveries.queue_pending() == 1
    finally:
        monkey.delay = original
    work(swept)
    assert Run.objects.filter(automation=automation).count() == 1


def test_a_shared_endpoint_routes_each_delivery_to_the_connection_of_its_account(
    apps, owner, another_account, hooks_client, sent_deliveries
):
    chat = apps["birch-chat"]
    first = connect(owner, chat, account="acct-1")
    second = connect(another_account, chat, account="acct-2")
    mine = listening(owner, first, "new_message", only_when(0), name="Mine")
    theirs = listening(another_account, second, "new_message", only_when(0), name="Theirs")
    path = path_of(endpoints.app_url(chat))
    for account, n in (("acct-1", 1), ("acct-2", 2), ("acct-2", 3)):
        assert post(hooks_client, path, {"account": {"id": account}, "n": n}).status_code == 200
    work(sent_deliveries)
    assert [r.trigger["body"]["n"] for r in Run.objects.filter(automation=mine)] == [1]
    assert sorted(r.trigger["body"]["n"] for r in Run.objects.filter(automation=theirs)) == [2, 3]
    assert set(Delivery.objects.filter(automation__isnull=True).values_list("status", flat=True)) == {"done"}


def test_a_shared_endpoint_routes_by_a_header_when_the_app_says_so(apps, owner, hooks_client, sent_deliveries):
    desk = apps["cedar-desk"]
    connection = connect(owner, desk, account="team-9")
    automation = listening(owner, connection, "new_ticket", only_when(0))
    path = path_of(endpoints.app_url(desk))
    assert post(hooks_client, path, {"n": 1}, HTTP_X_ACCOUNT_ID="team-9").status_code == 200
    assert post(hooks_client, path, {"n": 2}, HTTP_X_ACCOUNT_ID="team-8").status_code == 200
    assert post(hooks_client, path, {"n": 3}).status_code == 200
    work(sent_deliveries)
    assert [r.trigger["body"]["n"] for r in Run.objects.filter(automation=automation)] == [1]
    unmatched = dict(Delivery.objects.filter(status="unmatched").values_list("account", "error"))
    assert unmatched == {
        "team-8": "no connection of cedar-desk is to the account 'team-8' that the x-account-id header names",
        "": "the x-account-id header names no account",
    }


def test_a_routing_header_forgotten_while_the_body_arrives_still_routes_the_delivery(
    apps, owner, hooks_client, sent_deliveries, monkeypatch
):
    desk = apps["cedar-desk"]
    automation = listening(owner, connect(owner, desk, account="team-9"), "new_ticket", only_when(0))
    path = path_of(endpoints.app_url(desk))
    read = bodies.read_messages

    async def forgetting_then_read(*args, **kwargs):
        selectors._routing_headers.clear()  # its memory ends while a slow body is still arriving
        return await read(*args, **kwargs)

    monkeypatch.setattr(bodies, "read_messages", forgetting_then_read)
    for n in (1, 2):  # the key looked up, then remembered
        assert post(hooks_client, path, {"n": n}, HTTP_X_ACCOUNT_ID="team-9").status_code == 200
    work(sent_deliveries)
    assert sorted(r.trigger["body"]["n"] for r in Run.objects.filter(automation=automation)) == [1, 2]
    assert not Delivery.objects.filter(status="unmatched").exists()


def test_an_unmatched_delivery_is_recorded_and_shown_to_staff(apps, owner, hooks_client, sent_deliveries, staff_client):
    chat = apps["birch-chat"]
    connect(owner, chat, account="acct-1")
    response = post(hooks_client, path_of(endpoints.app_url(chat)), {"account": {"id": "nobody"}})
    assert response.status_code == 200
    work(sent_deliveries)
    delivery = Delivery.objects.get()
    assert delivery.status == "unmatched" and "nobody" in delivery.error
    listing = staff_client.get("/admin/hooks/delivery/?status__exact=unmatched").content.decode()
    assert str(delivery.public_id) in listing
    page = staff_client.get(f"/admin/hooks/delivery/{delivery.pk}/change/").content.decode()
    assert "nobody" in page and "unmatched" in page
    endpoint = staff_client.get(f"/admin/hooks/sharedendpoint/{chat.pk}/change/").content.decode()
    assert endpoints.app_url(chat) in endpoint


def test_a_connection_with_no_listening_automation_records_its_delivery_unmatched(
    apps, owner, hooks_client, sent_deliveries
):
    crm = connect(owner, apps["acorn-crm"])
    assert post(hooks_client, path_of(endpoints.connection_url(crm)), {"n": 1}).status_code == 200
    work(sent_deliveries)
    delivery = Delivery.objects.get()
    assert delivery.status == "unmatched"
    assert delivery.error == f"no automation listens with a per_connection trigger on connection {crm.pk}"


@pytest.mark.parametrize(("body", "content_type"), HOSTILE)
def test_hostile_bodies_at_both_urls_end_run_or_unmatched_never_lost(
    apps, owner, hooks_client, sent_deliveries, body, content_type
):
    crm = connect(owner, apps["acorn-crm"])
    chat = apps["birch-chat"]
    connect(owner, chat, account="acct-1")
    automation = listening(owner, crm, "new_lead", [])
    for path in (path_of(endpoints.connection_url(crm)), path_of(endpoints.app_url(chat))):
        response = hooks_client.generic("POST", path, body, content_type=content_type)
        assert response.status_code == 200
    work(sent_deliveries)
    statuses = dict(Delivery.objects.filter(automation__isnull=True).values_list("connection_id", "status"))
    assert statuses == {crm.pk: "done", None: "unmatched"}
    assert Run.objects.get(automation=automation).status == "succeeded"


def test_an_unknown_or_malformed_key_at_either_url_is_a_404(apps, hooks_client):
    for path in ("/connection-nope", "/app-nope", "/connection-", "/app-a/b", "/connection-%00"):
        assert hooks_client.post(path, data=b"{}", content_type="application/json").status_code == 404
    assert not Delivery.objects.exists()


@override_settings(HTTP_STEP_ALLOW_PRIVATE=True)
def test_connecting_reads_the_account_from_the_test_calls_answer(make_catalog, owner):
    from tests.local_apps import QuietHandler, serving

    class Me(QuietHandler):
        def do_GET(self):
            answer = b'{"user": {"id": 4711, "name": "Ann"}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    with serving(Me) as base:
        test_request = {"method": "GET", "url": base + "/me"}
        make_catalog(
            app_doc(
                "dove-api",
                auth_type="api_key",
                auth_config={"test_request": test_request, "routing": {"body_path": "a", "account_path": "user.id"}},
                triggers=[app_trigger("event", "shared_endpoint")],
            )
        )
        app = App.objects.get(slug="dove-api")
        connection = connection_services.connect(owner=owner, app=app, label="Mine", credential="k-123")
        assert connection.account_id == "4711"
        Connection.objects.filter(pk=connection.pk).update(account_id="")
        connection_services.reconnect(connection=Connection.objects.get(pk=connection.pk), credential="k-456")
        assert Connection.objects.get(pk=connection.pk).account_id == "4711"


def test_the_owner_sees_the_connections_url_with_the_instruction(apps, owner, client):
    crm, chat = connect(owner, apps["acorn-crm"]), connect(owner, apps["birch-chat"])
    client.force_login(owner)
    page = client.get(f"/account/connections/{crm.pk}").content.decode()
    assert endpoints.connection_url(crm) in page and "Paste this URL" in page
    assert "/connection-" not in client.get(f"/account/connections/{chat.pk}").content.decode()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@hypothesis_settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], deadline=None)
@given(document=JSON, path=st.text(max_size=30), raw=st.binary(max_size=200))
def test_the_routing_rule_reads_any_body_as_an_account_or_none(document, path, raw):
    for found in (routing.account_at(document, path), routing.account_in_answer(raw, path)):
        assert found is None or (0 < len(found) <= routing.MAX_ACCOUNT and "\x00" not in found)
        assert found is None or found == found.strip()


@hypothesis_settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(name=st.text(max_size=20), value=st.text(max_size=400), config=JSON)
def test_the_routing_rule_reads_any_header_and_any_auth_config_without_raising(name, value, config):
    rule = routing.rule_of({"routing": config})
    assert set(rule) <= {"body_path", "header", "account_path"}
    found = routing.account_in_headers(name.lower(), {name.lower(): value})
    assert found == "" or (len(found) <= routing.MAX_ACCOUNT and all(ord(c) >= 32 for c in found))


def test_an_account_in_a_body_is_a_string_or_a_number_never_a_list_a_dict_or_a_boolean():
    body = {"a": {"id": 12, "s": " x ", "t": True, "l": [1], "d": {}, "n": "a\x00b", "e": ""}, "list": ["p", "q"]}
    found = {path: routing.account_at(body, path) for path in ("a.id", "a.s", "a.t", "a.l", "a.d", "a.n", "a.e")}
    assert found == {"a.id": "12", "a.s": "x", "a.t": None, "a.l": None, "a.d": None, "a.n": None, "a.e": None}
    assert routing.account_at(body, "list.1") == "q" and routing.account_at(body, "list.9") is None
    assert routing.account_in_answer(b"[" * 10000 + b"]" * 10000, "0") is None  # nested thousands deep


def test_the_keys_of_both_urls_are_redacted_wherever_a_url_is_written():
    assert redact("POST /connection-k3y HTTP/1.1") == "POST /connection-{key} HTTP/1.1"
    assert redact("https://hooks.example/app-k3y?x=1") == "https://hooks.example/app-{key}?x=1"
    assert redact("/%61pp-k3y and /connection%2Dk3y") == "/%61pp-{key} and /connection%2D{key}"
