"""A self-registering app trigger with the whole service running: the webhook the app is given carries its
deliveries to the worker; turning off, a refusal, deleting, and beat's cleanup retrying a removal that failed."""

import httpx
import pytest

from automations import services
from automations.models import Automation, LookupRow
from automations.triggers import TriggerRefused
from catalog.models import App
from connections import services as connection_services
from connections.models import Registration
from connections.tests.other_app import KEY, REFUSAL, birch_api, birch_doc
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END
RECORD = [
    {"id": "keep", "kind": "lookup_rows", "table": "responses", "action": "add", "values": {"n": "{{trigger.body.n}}"}}
]


@pytest.fixture
def stack(tmp_path, settings):
    running = Stack(
        tmp_path, HTTP_STEP_ALLOW_PRIVATE="1", REGISTRATION_CLEANUP_SECONDS="1", REGISTRATION_RETRY_SECONDS="1"
    )
    running.start_web()
    running.start_worker()
    running.start_beat()
    settings.HOOKS_URL = running.hooks  # the URL registered in the app is the one the hooks process answers
    settings.HTTP_STEP_ALLOW_PRIVATE = True  # the app below listens on loopback
    settings.REGISTRATION_RETRY_SECONDS = 1  # a removal failing here, when turned off, is due again a second later
    yield running
    running.stop()


@pytest.fixture
def birch():
    with birch_api() as state:
        yield state


@pytest.fixture
def definition(make_catalog, stack, birch, owner) -> dict:
    make_catalog(birch_doc(birch.base))
    connection = connection_services.connect(
        owner=owner, app=App.objects.get(slug="birch-forms"), label="Forms", credential=KEY
    )
    trigger = {"type": "app_trigger", "app": "birch-forms", "trigger": "new_response", "connection": connection.pk}
    return {"trigger": trigger, "steps": RECORD}


def state_of(remote_id: str) -> str | None:
    return Registration.objects.filter(remote_id=remote_id).values_list("state", flat=True).first()


def test_the_registered_url_runs_the_automation_and_off_removes_it_with_beat_retrying_a_failure(
    stack, birch, owner, definition
):
    automation = services.create_automation(owner=owner, name="Responses", definition=definition, enabled=True)
    assert list(birch.hooks) == ["hook-1"]
    answer = httpx.post(birch.hooks["hook-1"], json={"n": 7}, timeout=30)  # the app sends what happened
    assert answer.status_code == 200
    wait_until(lambda: LookupRow.objects.filter(automation=automation, data={"n": 7}).exists(), 60, message="a run")

    birch.fail_deletes = True
    services.turn_off(automation=automation)
    assert state_of("hook-1") == Registration.State.REMOVAL_FAILED and "hook-1" in birch.hooks
    birch.deleted.clear()
    birch.fail_deletes = False
    assert birch.deleted.wait(60), "beat's cleanup never removed the registration"
    wait_until(lambda: state_of("hook-1") == Registration.State.REMOVED, 30, message="the record marked removed")
    assert birch.hooks == {}


def test_a_refusal_leaves_it_off_and_deleting_removes_the_registration_first(stack, birch, owner, definition):
    automation = services.create_automation(owner=owner, name="Responses", definition=definition)
    birch.refuse = True
    with pytest.raises(TriggerRefused, match=f"Birch Forms answered 422: {REFUSAL}"):
        services.turn_on(automation=automation)
    assert not Automation.objects.get(pk=automation.pk).enabled and not Registration.objects.exists()

    birch.refuse = False
    services.turn_on(automation=automation)
    url = birch.hooks["hook-1"]
    services.delete_automation(automation=automation)
    assert birch.hooks == {}
    registration = Registration.objects.get()
    assert (registration.automation_id, registration.state) == (None, Registration.State.REMOVED)
    assert httpx.post(url, json={"n": 1}, timeout=30).status_code == 404
