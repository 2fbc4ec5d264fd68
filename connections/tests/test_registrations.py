"""Self-registering app triggers through the services: the webhook made in the other app when turned on, removed
when turned off, deleted or changed, a refusal that leaves it off, reuse, and the cleanup with its backoff."""

import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts import connected
from automations import services
from automations.models import Automation
from automations.triggers import TriggerRefused
from catalog.models import App
from connections import keys, registrations
from connections import services as connection_services
from connections.models import Connection, Registration
from connections.tests import other_app
from connections.tests.other_app import KEY, REFUSAL, birch_doc, definition

pytestmark = pytest.mark.django_db
ACTIVE, REMOVED, FAILED = (Registration.State.ACTIVE, Registration.State.REMOVED, Registration.State.REMOVAL_FAILED)


@pytest.fixture
def connection(make_catalog, birch, owner):
    return other_app.connect(owner, make_catalog, birch.base)


@pytest.fixture
def automation(owner, connection):
    return services.create_automation(owner=owner, name="Responses", definition=definition(connection.pk))


def posts(birch) -> list:
    return [request for request in birch.requests if request[0] == "POST"]


def test_turning_on_registers_the_automations_url_and_turning_off_removes_it(
    birch, automation, django_capture_on_commit_callbacks
):
    services.turn_on(automation=automation)
    url = services.hook_url(automation)
    assert list(birch.hooks.values()) == [url]
    assert posts(birch) == [("POST", "/hooks", {"target_url": url, "event": "response.created"}, f"Bearer {KEY}")]
    registration = Registration.objects.get()
    assert (registration.automation, registration.state, registration.remote_id) == (automation, ACTIVE, "hook-1")
    assert registration.url_digest == hashlib.sha256(url.encode()).hexdigest()
    with django_capture_on_commit_callbacks(execute=True):
        services.turn_off(automation=automation)
    assert birch.hooks == {}
    assert birch.requests[-1][:2] == ("DELETE", "/hooks/hook-1")
    registration.refresh_from_db()
    assert (registration.state, registration.attempts, registration.last_error) == (REMOVED, 1, "")


def test_no_column_of_a_registration_holds_the_url_or_its_key(birch, automation):
    services.turn_on(automation=automation)
    url = services.hook_url(automation)
    key = url.split("/automation-", 1)[1]
    row = Registration.objects.values().get()
    assert not any(key in str(value) for value in row.values()), row


def test_an_app_that_refuses_leaves_the_automation_off_with_its_words(birch, automation):
    birch.refuse = True
    with pytest.raises(TriggerRefused) as refused:
        services.turn_on(automation=automation)
    assert str(refused.value) == f"Birch Forms did not register the webhook: Birch Forms answered 422: {REFUSAL}"
    automation.refresh_from_db()
    assert automation.enabled is False
    assert not Registration.objects.exists()


def test_a_refused_key_marks_the_connection_for_reconnection_and_leaves_it_off(birch, automation, connection):
    Connection.objects.filter(pk=connection.pk).update(credential_sealed=keys.seal("sk-revoked"))
    with pytest.raises(TriggerRefused, match="Birch Forms answered 401: Invalid API key"):
        services.turn_on(automation=automation)
    connection.refresh_from_db()
    assert connection.state == Connection.State.NEEDS_RECONNECTION
    with pytest.raises(TriggerRefused, match="the connection “Forms” to Birch Forms needs reconnection"):
        services.turn_on(automation=automation)
    assert len(posts(birch)) == 1
    assert not Automation.objects.get(pk=automation.pk).enabled


def test_turning_on_again_reuses_our_registration_rather_than_adding_a_second(
    birch, automation, django_capture_on_commit_callbacks
):
    services.turn_on(automation=automation)
    services.turn_on(automation=automation)  # already on
    assert len(posts(birch)) == 1
    birch.fail_deletes = True
    with django_capture_on_commit_callbacks(execute=True):
        services.turn_off(automation=automation)
    assert Registration.objects.get().state == FAILED  # the app may still have it
    services.turn_on(automation=automation)
    assert len(posts(birch)) == 1 and len(birch.hooks) == 1
    registration = Registration.objects.get()
    assert (registration.state, registration.next_try_at) == (ACTIVE, None)
    automation.refresh_from_db()
    assert automation.enabled


def test_a_failed_removal_keeps_its_record_and_the_cleanup_retries_it_with_backoff(
    birch, automation, settings, django_capture_on_commit_callbacks
):
    settings.REGISTRATION_RETRY_SECONDS = 300
    services.turn_on(automation=automation)
    birch.fail_deletes = True
    with django_capture_on_commit_callbacks(execute=True):
        services.turn_off(automation=automation)
    registration = Registration.objects.get()
    assert (registration.state, registration.attempts) == (FAILED, 1)
    assert registration.last_error == "Birch Forms answered 500: the hook store is down"
    first_wait = registration.next_try_at - registration.updated_at
    assert timedelta(seconds=299) < first_wait <= timedelta(seconds=300)

    deletes = len(birch.requests)
    assert registrations.cleanup(now=registration.next_try_at - timedelta(seconds=1))["tried"] == 0  # not due
    assert len(birch.requests) == deletes
    assert registrations.cleanup(now=registration.next_try_at) == {"released": 0, "tried": 1, "removed": 0}
    registration.refresh_from_db()
    assert (registration.state, registration.attempts) == (FAILED, 2)
    assert registration.next_try_at - registration.updated_at > timedelta(seconds=599)  # doubled

    birch.fail_deletes = False
    assert registrations.cleanup(now=registration.next_try_at)["removed"] == 1
    registration.refresh_from_db()
    assert (registration.state, registration.attempts, registration.next_try_at) == (REMOVED, 3, None)
    assert birch.hooks == {}


def test_deleting_removes_the_registration_first_and_a_failure_is_left_to_the_cleanup(
    birch, owner, connection, automation, django_capture_on_commit_callbacks
):
    services.turn_on(automation=automation)
    with django_capture_on_commit_callbacks(execute=True):
        services.delete_automation(automation=automation)
    assert birch.hooks == {}
    assert Registration.objects.get().state == REMOVED

    second = services.create_automation(owner=owner, name="Two", definition=definition(connection.pk), enabled=True)
    birch.fail_deletes = True
    with django_capture_on_commit_callbacks(execute=True):
        services.delete_automation(automation=second)
    assert not Automation.objects.filter(pk=second.pk).exists()
    kept = Registration.objects.get(remote_id="hook-2")
    assert (kept.automation, kept.state) == (None, FAILED)
    birch.fail_deletes = False
    assert registrations.cleanup(now=kept.next_try_at)["removed"] == 1
    assert birch.hooks == {}


def test_a_registration_no_automation_needs_is_removed_by_the_cleanup(birch, automation):
    """A turn-on that failed after the app registered the webhook leaves it behind, the automation off."""
    registrations.ensure(automation)
    registration = Registration.objects.get()
    assert registrations.cleanup()["released"] == 0  # young: it may belong to a turn-on under way
    later = timezone.now() + registrations.GRACE + timedelta(seconds=1)
    assert registrations.cleanup(now=later) == {"released": 1, "tried": 1, "removed": 1}
    registration.refresh_from_db()
    assert registration.state == REMOVED and birch.hooks == {}


def test_changing_the_trigger_while_on_registers_the_new_one_and_removes_the_old(
    birch, owner, connection, automation, django_capture_on_commit_callbacks
):
    services.turn_on(automation=automation)
    with django_capture_on_commit_callbacks(execute=True):
        services.update_automation(automation=automation, definition=definition(connection.pk, "new_signup"))
    assert birch.hooks == {}  # a manual trigger registers nothing
    assert Registration.objects.get().state == REMOVED
    with django_capture_on_commit_callbacks(execute=True):
        services.update_automation(automation=automation, definition=definition(connection.pk))
    assert list(birch.hooks) == ["hook-2"]
    assert Registration.objects.get(remote_id="hook-2").state == ACTIVE
    automation.refresh_from_db()
    assert automation.enabled


def test_the_cleanup_leaves_a_registration_its_automation_still_needs(birch, automation):
    services.turn_on(automation=automation)
    services.update_automation(automation=automation, name="Renamed")  # a change, not to its trigger
    later = timezone.now() + timedelta(days=2)
    assert registrations.cleanup(now=later) == {"released": 0, "tried": 0, "removed": 0}
    assert Registration.objects.get().state == ACTIVE and len(birch.hooks) == 1


def test_an_answer_without_an_id_is_a_refusal_that_says_so(make_catalog, birch, owner):
    make_catalog(birch_doc(birch.base, endpoint=birch.base + "/hooks-without-id"))
    birch_app = App.objects.get(slug="birch-forms")
    connection = connection_services.connect(owner=owner, app=birch_app, label="Forms", credential=KEY)
    automation = services.create_automation(owner=owner, name="R", definition=definition(connection.pk))
    with pytest.raises(TriggerRefused, match="Birch Forms answered 200 without the id of the webhook"):
        services.turn_on(automation=automation)
    assert not Registration.objects.exists() and not Automation.objects.get(pk=automation.pk).enabled


def test_a_url_the_app_echoes_in_its_errors_is_shown_and_kept_without_its_key(
    birch, automation, django_capture_on_commit_callbacks
):
    key = services.hook_url(automation).split("/automation-", 1)[1]
    birch.echo = birch.refuse = True
    with pytest.raises(TriggerRefused) as refused:
        services.turn_on(automation=automation)
    assert "target_url must be reachable" in str(refused.value) and "{key}" in str(refused.value)
    assert key not in str(refused.value)
    birch.refuse = False
    services.turn_on(automation=automation)
    birch.fail_deletes = True
    with django_capture_on_commit_callbacks(execute=True):
        services.turn_off(automation=automation)
    registration = Registration.objects.get()
    assert registration.state == FAILED and "the hook store is down" in registration.last_error
    assert key not in registration.last_error and "{key}" in registration.last_error


@pytest.mark.django_db(transaction=True)
def test_deleting_the_connection_with_its_automations_turned_off_removes_their_webhooks_from_the_app_first(
    birch, owner, connection, automation
):
    services.turn_on(automation=automation)
    assert list(birch.hooks) == ["hook-1"]

    outcome = connected.delete(connection=connection, turn_off=True)

    assert (outcome.deleted, outcome.turned_off) == (True, [automation])
    assert birch.hooks == {}
    assert birch.requests[-1][:3] == ("DELETE", "/hooks/hook-1", None)
    assert Registration.objects.get().state == REMOVED
    assert not Connection.objects.filter(pk=connection.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_deleting_the_connection_tries_a_failed_removal_again_while_its_key_can(birch, owner, connection, automation):
    services.turn_on(automation=automation)
    birch.fail_deletes = True
    services.turn_off(automation=automation)  # the app fails the removal: kept for the cleanup
    assert Registration.objects.get().state == FAILED
    birch.fail_deletes = False

    assert connected.delete(connection=connection).deleted

    registration = Registration.objects.get()
    assert (registration.state, registration.attempts) == (REMOVED, 2)
    assert birch.hooks == {}


def test_a_connection_about_to_go_keeps_the_webhook_of_an_automation_turned_on_meanwhile(birch, automation, connection):
    """Between the delete's turn-offs and its removals, someone turned an automation on again: its webhook stays,
    and so does the connection (accounts/connected.py refuses the delete then)."""
    services.turn_on(automation=automation)

    assert registrations.release_connection(connection) == 0

    assert Registration.objects.get().state == ACTIVE
    assert list(birch.hooks) == ["hook-1"]
