"""Each tool through /mcp: what it answers, and that a user sees and touches only their own automations."""

import json
import uuid

import pytest

from automations import runs
from automations.models import Automation, Run
from conftest import app_doc
from hooks import deliveries as hook_deliveries
from hooks.models import Delivery
from mcp_auth.tests.conftest import Mcp
from mcp_auth.tests.tokens import issue_token
from mcp_server.tools import catalog as catalog_tools

pytestmark = pytest.mark.django_db

RECORD = [{"id": "note", "kind": "set_values", "values": {"seen": "{{trigger.body.n}}"}}]


def structured(result) -> dict:
    assert result["isError"] is False, result
    return result["structuredContent"]


def refused(result) -> dict:
    assert result["isError"] is True, result
    return result["structuredContent"]


# --- catalog ----------------------------------------------------------------


def test_search_apps_follows_the_feeds_connectable_rule(mcp, make_catalog):
    make_catalog(
        app_doc("acme-crm", name="Acme CRM", popularity=500),
        app_doc("crm-draft", name="Draft CRM", published=False),
        app_doc("old-crm", name="Old CRM", retired_at="2020-01-01T00:00:00Z"),
        app_doc("mailer", name="Mailer", category="Email"),
    )
    apps = structured(mcp.call("search_apps", {"query": "crm"}))["apps"]
    assert [app["slug"] for app in apps] == ["acme-crm"]
    app = apps[0]
    assert app["connect_url"] == "http://testserver/signup?app=acme-crm"
    assert app["triggers"] == [{"name": "New Thing", "description": "When a thing appears."}]
    assert app["actions"] == [{"name": "Create Thing", "description": "Makes a thing."}]
    text = str(apps)
    assert "internal." not in text and "secret-of" not in text and "new_thing" not in text  # never internals


def test_search_apps_with_no_query_lists_the_most_popular_first(mcp, make_catalog):
    make_catalog(app_doc("low", popularity=1), app_doc("high", popularity=900))
    apps = structured(mcp.call("search_apps", {"limit": 1}))["apps"]
    assert [app["slug"] for app in apps] == ["high"]


def test_search_apps_takes_an_integral_limit_written_as_a_float(mcp, make_catalog):
    make_catalog(app_doc("low", popularity=1), app_doc("high", popularity=900))
    for limit in ("1.0", "1e0", "0.1e1"):  # JSON text JSON Schema's "integer" admits, as a client may write it
        message = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_apps", '
        answer = mcp.post(message + f'"arguments": {{"limit": {limit}}}}}}}', mcp.headers("tools/call", "search_apps"))
        assert [app["slug"] for app in structured(answer.json()["result"])["apps"]] == ["high"], limit


def test_search_apps_survives_hostile_text(mcp, make_catalog):
    make_catalog(app_doc("alpha"))
    assert structured(mcp.call("search_apps", {"query": "a\x00\ud800%_"}))["apps"] == []


def test_the_same_search_is_answered_from_memory_until_the_feed_changes(mcp, make_catalog):
    make_catalog(app_doc("acme-crm"), app_doc("beta-crm"))
    first = catalog_tools.search_apps(None, {"query": "CRM  acme"})
    assert catalog_tools.search_apps(None, {"query": "crm acme"}) is first  # the same words, case aside
    assert catalog_tools.search_apps(None, {"query": "crm acme", "limit": 2}) is not first

    renamed = [{"key": "new_thing", "name": "New Thing", "description": "When a thing is renamed."}]
    make_catalog(app_doc("acme-crm", triggers=renamed))  # a new feed version: only an operation changed
    apps = structured(mcp.call("search_apps", {"query": "crm acme"}))["apps"]
    assert apps[0]["triggers"] == [{"name": "New Thing", "description": "When a thing is renamed."}]


def test_search_apps_says_so_when_the_feed_is_not_built(mcp, make_catalog):
    make_catalog(app_doc("alpha"), build=False)
    assert "unavailable" in refused(mcp.call("search_apps", {"query": "alpha"}))["error"]


def test_search_apps_in_a_catalog_with_no_app_finds_none_and_says_why(mcp):
    answer = structured(mcp.call("search_apps", {"query": "crm"}))
    assert answer == {"apps": [], "message": "no app is published in this catalog yet, so no app can be found"}


# --- automations ------------------------------------------------------------


def test_list_automations_lists_only_the_users_own(mcp, make_automation, another_account):
    mine = make_automation(name="Mine")
    make_automation(name="Theirs", user=another_account)
    listed = structured(mcp.call("list_automations"))["automations"]
    assert [item["name"] for item in listed] == ["Mine"]
    assert listed[0]["automation_id"] == str(mine.uuid)
    assert listed[0]["enabled"] is True and listed[0]["trigger_type"] == "webhook"


def test_get_automation_shows_its_urls_and_definition(mcp, make_automation):
    automation = make_automation(RECORD)
    shown = structured(mcp.call("get_automation", {"automation_id": str(automation.uuid)}))
    assert shown["definition"]["steps"] == RECORD
    assert shown["urls"]["webhook"].startswith("http://testserver/automation-")
    assert shown["urls"]["web_service"].startswith("http://testserver/webservice-")


def test_a_connections_key_is_never_in_a_tool_result(mcp, make_automation, owner, plain_apps):
    from connections import services as connections

    connection = connections.connect(owner=owner, app=plain_apps["token_mint"], label="Mint", credential="tok-9f8e7d6c")
    automation = make_automation([{"id": "use", "kind": "set_values", "values": {"connection": connection.pk}}])
    shown = structured(mcp.call("get_automation", {"automation_id": str(automation.uuid)}))
    listed = structured(mcp.call("list_automations"))
    assert shown["definition"]["steps"][0]["values"] == {"connection": connection.pk}
    for result in (str(shown), str(listed)):
        assert "tok-9f8e7d6c" not in result and connection.credential_sealed not in result


@pytest.mark.parametrize("tool", ["get_automation", "turn_off_automation", "turn_on_automation", "list_runs"])
def test_another_accounts_automation_looks_like_no_automation(mcp, make_automation, another_account, tool):
    theirs = make_automation(user=another_account, enabled=True)
    unknown_id = str(uuid.uuid4())
    unknown = refused(mcp.call(tool, {"automation_id": unknown_id}))
    foreign = refused(mcp.call(tool, {"automation_id": str(theirs.uuid)}))
    assert foreign["error"].replace(str(theirs.uuid), "ID") == unknown["error"].replace(unknown_id, "ID")
    theirs.refresh_from_db()
    assert theirs.enabled is True


def test_a_malformed_automation_id_is_a_tool_error(mcp):
    assert "no automation" in refused(mcp.call("get_automation", {"automation_id": "not-a-uuid"}))["error"]


def test_arguments_that_do_not_match_the_schema_come_back_with_their_paths(mcp):
    result = refused(mcp.call("list_runs", {"automation_id": 5, "limit": 500, "extra": 1}))
    paths = {error["path"] for error in result["errors"]}
    assert {"$.automation_id", "$.limit", "$"} <= paths


def test_turn_off_and_on(mcp, make_automation):
    automation = make_automation(enabled=True)
    assert structured(mcp.call("turn_off_automation", {"automation_id": str(automation.uuid)}))["enabled"] is False
    automation.refresh_from_db()
    assert automation.enabled is False
    assert structured(mcp.call("turn_on_automation", {"automation_id": str(automation.uuid)}))["enabled"] is True
    automation.refresh_from_db()
    assert automation.enabled is True


def test_turning_on_and_off_activates_and_deactivates_the_trigger_once(mcp, make_automation, trigger_hooks):
    automation = make_automation(enabled=False)
    for tool in ("turn_on_automation", "turn_on_automation", "turn_off_automation", "turn_off_automation"):
        structured(mcp.call(tool, {"automation_id": str(automation.uuid)}))
    assert trigger_hooks.calls == [("activate", "webhook", automation.pk), ("deactivate", "webhook", automation.pk)]


def test_a_trigger_that_refuses_keeps_the_automation_off_and_the_tool_says_why(mcp, make_automation, trigger_hooks):
    automation = make_automation(enabled=False)
    trigger_hooks.refuse = "the other app answered 401"
    result = refused(mcp.call("turn_on_automation", {"automation_id": str(automation.uuid)}))
    assert result["error"] == "the automation stays off: the other app answered 401"
    automation.refresh_from_db()
    assert automation.enabled is False


def test_an_unknown_tool_is_invalid_params(mcp):
    response = mcp.request("tools/call", {"name": "drop_tables", "arguments": {}})
    assert response.json()["error"]["code"] == -32602


# --- runs -------------------------------------------------------------------


def test_run_automation_accepts_a_delivery_as_a_webhook_would(mcp, make_automation):
    automation = make_automation(RECORD)
    answer = structured(mcp.call("run_automation", {"automation_id": str(automation.uuid), "payload": {"n": 1}}))
    delivery = Delivery.objects.get(public_id=answer["delivery_id"])
    assert delivery.automation == automation and bytes(delivery.body) == b'{"n":1}'
    assert delivery.path == "/mcp" and delivery.content_type == "application/json"
    assert answer["state"] == "queued"
    status = structured(mcp.call("get_run_status", {"delivery_id": answer["delivery_id"]}))
    assert status["state"] == "queued" and status["run"] is None and status["finished"] is False

    hook_deliveries.process_delivery(delivery_id=delivery.pk)  # what the worker does

    status = structured(mcp.call("get_run_status", {"delivery_id": answer["delivery_id"]}))
    assert status["state"] == "succeeded" and status["finished"] is True
    assert status["run"]["steps"][0]["output"] == {"seen": 1}
    listed = structured(mcp.call("list_runs", {"automation_id": str(automation.uuid)}))["runs"]
    assert [run["run_id"] for run in listed] == [status["run"]["run_id"]]
    assert Run.objects.get(pk=listed[0]["run_id"]).source == Run.Source.WEBHOOK  # Execution History


def test_a_duplicate_payload_is_suppressed_as_a_webhook_is(mcp, make_automation):
    automation = make_automation(RECORD)
    ids = []
    for _ in range(2):
        answer = structured(mcp.call("run_automation", {"automation_id": str(automation.uuid), "payload": {"n": 7}}))
        hook_deliveries.process_delivery(delivery_id=Delivery.objects.get(public_id=answer["delivery_id"]).pk)
        ids.append(answer["delivery_id"])
    second = structured(mcp.call("get_run_status", {"delivery_id": ids[1]}))
    assert second["state"] == "suppressed" and second["finished"] is True
    assert Run.objects.get().suppressed_count == 1


def test_get_run_status_follows_a_failed_run_to_its_retry_then_to_the_last_attempt(mcp, make_automation):
    automation = make_automation(
        [{"id": "call", "kind": "http_request", "url": "not a url"}], settings={"retries": {"max_attempts": 2}}
    )
    answer = structured(mcp.call("run_automation", {"automation_id": str(automation.uuid), "payload": {"n": 3}}))
    hook_deliveries.process_delivery(delivery_id=Delivery.objects.get(public_id=answer["delivery_id"]).pk)
    status = structured(mcp.call("get_run_status", {"delivery_id": answer["delivery_id"]}))
    assert (status["state"], status["finished"], status["run"]["attempt"]) == ("retrying", False, 2)
    retry = Run.objects.get(attempt=2)
    Run.objects.filter(pk=retry.pk).update(resume_at=retry.started_at)  # its backoff is over
    assert runs.resume(retry.pk)
    status = structured(mcp.call("get_run_status", {"delivery_id": answer["delivery_id"]}))
    assert (status["state"], status["finished"], status["run"]["run_id"]) == ("failed", True, retry.pk)
    assert "not an http(s) URL" in status["error"]


def test_an_automation_that_is_off_keeps_the_payload(mcp, make_automation):
    automation = make_automation(RECORD, enabled=False)
    answer = structured(mcp.call("run_automation", {"automation_id": str(automation.uuid), "payload": {"n": 2}}))
    assert answer["state"] == "kept"
    delivery = Delivery.objects.get(public_id=answer["delivery_id"])
    hook_deliveries.process_delivery(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.PENDING and not Run.objects.exists()
    assert structured(mcp.call("get_run_status", {"delivery_id": answer["delivery_id"]}))["state"] == "kept"


def test_hostile_payloads_are_stored_and_run(mcp, make_automation):
    automation = make_automation(RECORD)
    payload = {"n": "a\x00b\ud800", "deep": [[[[1]]]], "big": 10**40}
    answer = structured(mcp.call("run_automation", {"automation_id": str(automation.uuid), "payload": payload}))
    delivery = Delivery.objects.get(public_id=answer["delivery_id"])
    hook_deliveries.process_delivery(delivery_id=delivery.pk)
    run = Run.objects.get()
    assert run.status == Run.Status.SUCCEEDED
    assert run.trigger["body"]["n"] == "a\ufffdb\ufffd"


def test_run_automation_refuses_automations_without_a_webhook_trigger(mcp, owner):
    from automations import services

    form = services.create_automation(
        owner=owner,
        name="A form",
        definition={"trigger": {"type": "web_service"}, "steps": []},
    )
    assert "trigger" in refused(mcp.call("run_automation", {"automation_id": str(form.uuid)}))["error"]
    assert not Delivery.objects.exists()


def test_run_automation_refuses_in_maintenance(mcp, make_automation, settings):
    settings.MAINTENANCE_MODE = True
    automation = make_automation()
    assert "maintenance" in refused(mcp.call("run_automation", {"automation_id": str(automation.uuid)}))["error"]
    assert not Delivery.objects.exists()


def test_another_users_run_cannot_be_followed(client, mcp, make_automation, another_account):
    from mcp_auth.tests.tokens import grant_mcp_tools

    automation = make_automation()
    answer = structured(mcp.call("run_automation", {"automation_id": str(automation.uuid)}))
    grant_mcp_tools(another_account)
    other = Mcp(client, issue_token(another_account)[0])
    assert "no run" in refused(other.call("get_run_status", {"delivery_id": answer["delivery_id"]}))["error"]
    assert "no run" in refused(other.call("get_run_status", {"delivery_id": "nonsense"}))["error"]


# --- builder ----------------------------------------------------------------

DEFINITION = {"trigger": {"type": "webhook"}, "steps": RECORD, "settings": {"suppress_duplicates": False}}


def test_create_automation_from_a_definition(mcp, owner):
    created = structured(mcp.call("create_automation", {"name": "Built by an agent", "definition": DEFINITION}))
    automation = Automation.objects.get(uuid=created["automation_id"])
    assert automation.owner == owner and automation.enabled is False
    assert automation.definition["steps"] == RECORD
    assert created["urls"]["webhook"]


def test_create_automation_reports_every_schema_error_with_its_path(mcp):
    bad = {"trigger": {"type": "carrier-pigeon"}, "steps": [{"id": "Bad Id", "kind": "http_request"}], "x": 1}
    result = refused(mcp.call("create_automation", {"name": "Broken", "definition": bad}))
    paths = {error["path"] for error in result["errors"]}
    assert {"$", "$.trigger.type", "$.steps[0].id"} <= paths
    assert all(error["message"] for error in result["errors"])
    assert not Automation.objects.exists()


def test_create_automation_reports_a_steps_own_errors(mcp):
    bad = {"trigger": {"type": "webhook"}, "steps": [{"id": "call", "kind": "http_request"}]}
    result = refused(mcp.call("create_automation", {"name": "Broken", "definition": bad}))
    assert result["errors"] == [{"path": "$.steps[0]", "message": "'url' is a required property"}]


def test_create_automation_refuses_a_connection_that_is_not_the_users_with_its_path(mcp, another_account, make_catalog):
    from catalog.models import App
    from connections import services as connection_services

    make_catalog(app_doc("acorn-crm", auth_type="none", auth_config={}))
    theirs = connection_services.connect(owner=another_account, app=App.objects.get(), label="Theirs")
    step = {"id": "a", "kind": "app_action", "app": "acorn-crm", "action": "create_thing", "connection": theirs.pk}
    bad = {"trigger": {"type": "webhook"}, "steps": [step]}
    result = refused(mcp.call("create_automation", {"name": "Borrowed", "definition": bad}))
    message = f"{theirs.pk} is not one of your connections to 'acorn-crm'"
    assert result["errors"] == [{"path": "$.steps[0].connection", "message": message}]
    assert not Automation.objects.exists()


def test_list_connections_gives_the_users_own_with_their_apps_operations_by_key_and_no_secret(
    mcp, owner, another_account, make_catalog
):
    from catalog.models import App
    from connections import services as connection_services

    make_catalog(app_doc("acorn-crm", name="Acorn CRM", auth_type="api_key", auth_config={}))
    app = App.objects.get()
    mine = connection_services.connect(owner=owner, app=app, label="Sales", credential="sk-live-never-shown-4242")
    connection_services.connect(owner=another_account, app=app, label="Theirs", credential="sk-live-theirs-0000")
    result = mcp.call("list_connections", {})
    listed = structured(result)["connections"]
    assert listed == [
        {
            "connection": mine.pk,
            "label": "Sales",
            "app": "acorn-crm",
            "app_name": "Acorn CRM",
            "state": "connected",
            "actions": [{"key": "create_thing", "name": "Create Thing", "description": "Makes a thing."}],
            "triggers": [{"key": "new_thing", "name": "New Thing", "description": "When a thing appears."}],
        }
    ]
    text = json.dumps(result)
    assert "sk-live" not in text and "internal.acorn-crm.example" not in text and "Theirs" not in text


def test_update_automation_renames_and_replaces_the_definition(mcp, make_automation):
    automation = make_automation()
    updated = structured(
        mcp.call(
            "update_automation", {"automation_id": str(automation.uuid), "name": "Renamed", "definition": DEFINITION}
        )
    )
    automation.refresh_from_db()
    assert automation.name == updated["name"] == "Renamed"
    assert automation.definition["steps"] == RECORD


def test_update_automation_with_errors_changes_nothing(mcp, make_automation):
    automation = make_automation(RECORD)
    bad = {"trigger": {"type": "webhook"}, "steps": [{"id": "x", "kind": "set_values", "values": "{{steps.later.y}}"}]}
    result = refused(mcp.call("update_automation", {"automation_id": str(automation.uuid), "definition": bad}))
    assert result["errors"]
    automation.refresh_from_db()
    assert automation.definition["steps"] == RECORD


def test_update_automation_of_another_account_is_refused(mcp, make_automation, another_account):
    theirs = make_automation(user=another_account, name="Theirs")
    refused(mcp.call("update_automation", {"automation_id": str(theirs.uuid), "name": "Mine now"}))
    theirs.refresh_from_db()
    assert theirs.name == "Theirs"


def test_create_automation_on_activates_its_trigger_once_and_a_refusal_leaves_it_off(mcp, trigger_hooks):
    created = structured(mcp.call("create_automation", {"name": "On", "definition": DEFINITION, "enabled": True}))
    on = Automation.objects.get(uuid=created["automation_id"])
    assert on.enabled and trigger_hooks.calls == [("activate", "webhook", on.pk)]
    trigger_hooks.refuse = "the other app answered 401"
    created = structured(mcp.call("create_automation", {"name": "Off", "definition": DEFINITION, "enabled": True}))
    assert created["note"] == "created, but it stays off: the other app answered 401"
    assert Automation.objects.get(uuid=created["automation_id"]).enabled is False


def test_update_automation_to_a_new_trigger_type_while_on_activates_it_or_changes_nothing(
    mcp, make_automation, trigger_hooks
):
    automation = make_automation(RECORD)
    trigger_hooks.calls.clear()
    trigger_hooks.refuse = "the other app answered 401"
    changed = {"automation_id": str(automation.uuid), "definition": {**DEFINITION, "trigger": {"type": "web_service"}}}
    assert "nothing was changed" in refused(mcp.call("update_automation", changed))["error"]
    automation.refresh_from_db()
    assert automation.enabled and automation.definition["trigger"]["type"] == "webhook"
    trigger_hooks.refuse = None
    structured(mcp.call("update_automation", changed))
    assert trigger_hooks.calls == [
        ("activate", "web_service", automation.pk),  # refused: the old trigger was told nothing
        ("activate", "web_service", automation.pk),
        ("deactivate", "webhook", automation.pk),
    ]


def test_builder_tools_work_in_the_modern_era_too(modern_mcp):
    created = structured(modern_mcp.call("create_automation", {"name": "Modern", "definition": DEFINITION}))
    assert Automation.objects.filter(uuid=created["automation_id"]).exists()
