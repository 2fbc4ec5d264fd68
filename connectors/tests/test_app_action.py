"""The app_action step: a catalog app's action performed with one of the owner's connections, end to end in a run."""

import json

import pytest

from automations import engine
from automations import services as automation_services
from automations.definition import InvalidDefinition
from automations.models import Run
from conftest import app_doc
from connections import services as connection_services
from connections.models import Connection
from tests.local_apps import QuietHandler, serving
from tests.local_oauth import create_lead_step

pytestmark = pytest.mark.django_db
KEY = "sk-live-acorn-4242-good"


def acorn(received: list, status: int = 201):
    """Acorn's API: POST /leads stores what it gets and answers status (401 to any other key)."""

    class Acorn(QuietHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            received.append({"path": self.path, "authorization": self.headers.get("Authorization"), "body": body})
            good = self.headers.get("Authorization") == f"Bearer {KEY}"
            answer = (status, {"id": 99}) if good else (401, {"error": {"message": "Invalid API key."}})
            data = json.dumps(answer[1]).encode()
            self.send_response(answer[0])
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Acorn


@pytest.fixture
def api(settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True  # the app is on loopback here
    received: list = []
    with serving(acorn(received)) as base:
        yield base, received


@pytest.fixture
def app(make_catalog, api):
    base, _ = api
    action = {
        "key": "create_lead",
        "name": "Create Lead",
        "description": "Adds a lead.",
        "endpoint": base + "/leads",
        "http_method": "POST",
        "request_template": {"email": "{{input.email}}", "source": "flowgate"},
    }
    make_catalog(app_doc("acorn-crm", name="Acorn CRM", auth_type="api_key", auth_config={}, actions=[action]))
    from catalog.models import App

    return App.objects.get(slug="acorn-crm")


@pytest.fixture
def connection(owner, app):
    return connection_services.connect(owner=owner, app=app, label="Sales", credential=KEY)


def step(connection_id, **fields) -> dict:
    return {**create_lead_step(connection_id), **fields}


def run_once(owner, steps, body=None) -> Run:
    automation = automation_services.create_automation(
        owner=owner, name="Leads", definition={"trigger": {"type": "webhook"}, "steps": steps}
    )
    run = Run.objects.create(
        automation=automation,
        definition=automation.definition,
        source="webhook",
        status="queued",
        trigger={"body": body or {"email": "ada@example.com"}},
    )
    engine.advance(run)  # as a worker does, its status, steps and error set on the run
    return run


def test_an_action_sends_the_input_with_the_connections_key_and_its_answer_is_the_steps_output(owner, connection, api):
    _, received = api
    run = run_once(owner, [step(connection.pk)])
    assert run.status == "succeeded", run.error
    assert run.steps[0]["output"]["status"] == 201 and run.steps[0]["output"]["body"] == {"id": 99}
    assert received == [
        {"path": "/leads", "authorization": f"Bearer {KEY}", "body": {"email": "ada@example.com", "source": "flowgate"}}
    ]
    connection.refresh_from_db()
    assert connection.last_used_at is not None
    assert KEY not in json.dumps(run.steps) and KEY not in json.dumps(run.definition)


# Failure paths.


def test_a_definition_naming_another_owners_connection_is_refused_with_its_path(owner, another_account, app):
    theirs = connection_services.connect(owner=another_account, app=app, label="Theirs", credential=KEY)
    with pytest.raises(InvalidDefinition) as refused:
        automation_services.create_automation(
            owner=owner, name="x", definition={"trigger": {"type": "webhook"}, "steps": [step(theirs.pk)]}
        )
    assert refused.value.errors == [f"$.steps[0].connection: {theirs.pk} is not one of your connections to 'acorn-crm'"]


def test_a_definition_naming_an_action_the_catalog_lacks_or_a_trigger_is_refused(owner, connection):
    for action, said in (
        ("delete_all", "has no action 'delete_all'"),
        ("new_thing", "is a trigger of 'acorn-crm', not an action"),
    ):
        with pytest.raises(InvalidDefinition, match=said):
            automation_services.create_automation(
                owner=owner,
                name="x",
                definition={"trigger": {"type": "webhook"}, "steps": [step(connection.pk, action=action)]},
            )


def test_a_connection_that_needs_reconnection_fails_the_step_before_any_call(owner, connection, api):
    _, received = api
    connection_services.needs_reconnection(connection=connection, problem="the key was revoked")
    run = run_once(owner, [step(connection.pk)])
    assert run.status == "failed" and "needs reconnection" in run.error
    assert received == []


def test_a_key_the_app_refuses_fails_the_run_and_marks_the_connection_for_reconnection(owner, app, api):
    _, received = api
    stale = connection_services.connect(owner=owner, app=app, label="Old", credential="sk-live-revoked-0000")
    run = run_once(owner, [step(stale.pk)])
    assert run.status == "failed" and "Acorn CRM answered 401: Invalid API key." in run.error
    stale.refresh_from_db()
    assert stale.state == Connection.State.NEEDS_RECONNECTION and "401" in stale.problem
    assert "sk-live-revoked-0000" not in run.error and "sk-live-revoked-0000" not in stale.problem


def test_a_connection_deleted_after_the_automation_was_saved_fails_the_step_plainly(owner, connection, api):
    automation = automation_services.create_automation(
        owner=owner, name="Leads", definition={"trigger": {"type": "webhook"}, "steps": [step(connection.pk)]}
    )
    Connection.objects.filter(pk=connection.pk).delete()
    run = Run.objects.create(
        automation=automation, definition=automation.definition, source="webhook", status="queued", trigger={"body": {}}
    )
    engine.advance(run)
    assert run.status == "failed" and f"connection {connection.pk} is not one of this owner's" in run.error


def test_an_automation_whose_connection_was_deleted_is_not_turned_on_and_says_why(owner, connection):
    from automations.triggers import TriggerRefused

    automation = automation_services.create_automation(
        owner=owner, name="Leads", definition={"trigger": {"type": "webhook"}, "steps": [step(connection.pk)]}
    )
    gone = connection.pk
    connection_services.delete(connection=connection)
    with pytest.raises(TriggerRefused) as refused:
        automation_services.turn_on(automation=automation)
    assert f"$.steps[0].connection: {gone} is not one of your connections" in str(refused.value)
    automation.refresh_from_db()
    assert not automation.enabled


def test_admin_refuses_to_give_an_automation_to_an_account_its_connections_are_not_from(
    owner, another_account, connection
):
    from automations.admin import AutomationForm

    document = {"trigger": {"type": "webhook"}, "steps": [step(connection.pk)]}
    data = {"owner": another_account.pk, "name": "Leads", "enabled": "", "definition": json.dumps(document)}
    form = AutomationForm(data=data)
    assert not form.is_valid()
    assert form.errors["definition"] == [
        f"$.steps[0].connection: {connection.pk} is not one of your connections to 'acorn-crm'"
    ]
    assert AutomationForm(data={**data, "owner": owner.pk}).is_valid()
