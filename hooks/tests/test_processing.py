"""Processing deliveries: runs, retries, suppression, off and on, reset, delete, and exactly-once completion."""

import uuid
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from automations import runs
from automations import services as automation_services
from automations.models import LookupRow, Run
from hooks import services
from hooks.incoming import Incoming
from hooks.models import Delivery
from tests.local_apps import serving, slow_handler

pytestmark = pytest.mark.django_db

RECORD = [
    {"id": "who", "kind": "set_values", "values": {"email": "{{trigger.body.email}}", "n": "{{trigger.body.n}}"}},
    {"id": "log", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"n": "{{steps.who.n}}"}},
]


def deliver(automation, body=b'{"email": "a@example.com", "n": 1}', query="", content_type="application/json"):
    accepted = services.accept_delivery(
        automation_id=automation.pk, incoming=Incoming("POST", "/automation-k", query, content_type, body)
    )
    return Delivery.objects.get(pk=accepted.pk)


def process(delivery):
    services.process_delivery(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    return delivery


def test_a_delivery_runs_the_steps_with_its_trigger_data(make_automation):
    automation = make_automation(RECORD)
    delivery = process(deliver(automation, query="x=1&x=2&y=3"))
    assert delivery.status == Delivery.Status.DONE
    run = delivery.run
    assert run.status == Run.Status.SUCCEEDED
    assert run.trigger == {
        "body": {"email": "a@example.com", "n": 1},
        "params": {"x": ["1", "2"], "y": "3"},
        "query_string": "x=1&x=2&y=3",
        "content_type": "application/json",
        "path": "/automation-{key}",  # the key is never stored (docs/webhooks.md)
    }
    assert [step["status"] for step in run.steps] == ["succeeded", "succeeded"]
    assert run.steps[0]["output"] == {"email": "a@example.com", "n": 1}
    assert LookupRow.objects.get().data == {"n": 1}


def test_processing_twice_completes_once(make_automation):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    process(delivery)
    process(delivery)
    assert Run.objects.count() == 1
    assert LookupRow.objects.count() == 1


def test_a_failed_run_is_retried_with_backoff_then_given_up(make_automation, django_capture_on_commit_callbacks):
    automation = make_automation(
        [{"id": "cond", "kind": "http_request", "url": "not a url"}],
        settings={"retries": {"max_attempts": 2, "backoff_seconds": 30}},
    )
    with django_capture_on_commit_callbacks():
        delivery = process(deliver(automation))
    assert delivery.status == Delivery.Status.PENDING
    assert delivery.attempts == 1
    assert timedelta(seconds=25) < delivery.not_before - timezone.now() <= timedelta(seconds=30)
    assert delivery.run.status == Run.Status.FAILED
    assert "not an http(s) URL" in delivery.run.error
    process(delivery)  # not due yet: nothing happens
    assert Run.objects.count() == 1
    Delivery.objects.filter(pk=delivery.pk).update(not_before=timezone.now())
    with django_capture_on_commit_callbacks():
        delivery = process(delivery)
    assert (delivery.status, delivery.attempts, Run.objects.count()) == (Delivery.Status.FAILED, 2, 2)


def test_a_byte_identical_body_after_a_success_is_suppressed_and_counted_on_the_original(make_automation):
    automation = make_automation(RECORD)
    first = process(deliver(automation))
    second, third = deliver(automation), deliver(automation)
    other = deliver(automation, body=b'{"email": "a@example.com", "n": 2}')
    for delivery in (second, third, other):
        process(delivery)
    second.refresh_from_db()
    third.refresh_from_db()
    other.refresh_from_db()
    assert (second.status, third.status, other.status) == ("suppressed", "suppressed", "done")
    assert second.suppressed_by == first.run
    first.run.refresh_from_db()
    assert first.run.suppressed_count == 2
    assert Run.objects.count() == 2


def test_a_failed_run_starts_no_suppression(make_automation, django_capture_on_commit_callbacks):
    automation = make_automation(
        [{"id": "cond", "kind": "http_request", "url": "nope"}], settings={"retries": {"max_attempts": 1}}
    )
    with django_capture_on_commit_callbacks():
        process(deliver(automation))
        second = process(deliver(automation))
    assert second.status == Delivery.Status.FAILED
    assert Run.objects.count() == 2


def test_suppression_ends_with_its_window_and_can_be_switched_off(make_automation, settings):
    automation = make_automation(RECORD)
    process(deliver(automation))
    Run.objects.update(finished_at=timezone.now() - timedelta(seconds=601))
    assert process(deliver(automation)).status == Delivery.Status.DONE
    quiet = make_automation(RECORD, settings={"suppress_duplicates": False}, name="no suppression")
    process(deliver(quiet))
    assert process(deliver(quiet)).status == Delivery.Status.DONE


def test_deliveries_kept_while_off_replay_in_arrival_order_when_turned_on(
    make_automation, eager_tasks, django_capture_on_commit_callbacks
):
    automation = make_automation(RECORD, enabled=False)
    kept = [deliver(automation, body=f'{{"n": {n}}}'.encode()) for n in range(5)]
    for delivery in kept:
        process(delivery)  # off: nothing runs
    assert not Run.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        automation_services.turn_on(automation=automation)
    assert [row.data["n"] for row in LookupRow.objects.order_by("pk")] == [0, 1, 2, 3, 4]
    assert set(Delivery.objects.values_list("status", flat=True)) == {"done"}


def test_reset_discards_unprocessed_deliveries_retries_and_this_automations_rows(
    make_automation, owner, django_capture_on_commit_callbacks
):
    automation = make_automation(RECORD, enabled=False)
    deliver(automation)
    retry = deliver(automation, body=b"2")
    Delivery.objects.filter(pk=retry.pk).update(attempts=1, not_before=timezone.now() + timedelta(hours=1))
    LookupRow.objects.create(owner=owner, automation=automation, table="seen", data={"n": 1})
    shared = LookupRow.objects.create(owner=owner, automation=None, table="seen", data={"n": 2})
    automation.trigger_state = {"cursor": 5}
    automation.save()
    with django_capture_on_commit_callbacks(execute=True):  # hooks discards the deliveries once reset commits
        automation_services.reset(automation=automation)
    assert not Delivery.objects.exists()
    assert list(LookupRow.objects.all()) == [shared]
    automation.refresh_from_db()
    assert automation.trigger_state == {}


def test_a_retry_of_a_delivery_running_during_a_reset_is_discarded_and_later_deliveries_run(
    make_automation, monkeypatch, django_capture_on_commit_callbacks
):
    automation = make_automation(
        [{"id": "cond", "kind": "http_request", "url": "not a url"}],
        settings={"retries": {"max_attempts": 3, "backoff_seconds": 30}},
    )
    running = deliver(automation)
    real_advance = services.engine.advance

    def advance_while_reset(run, **kwargs):
        automation_services.turn_off(automation=automation)  # the owner turns it off and resets it meanwhile
        with django_capture_on_commit_callbacks(execute=True):  # the reset commits (and discards) before the run ends
            automation_services.reset(automation=automation)
        return real_advance(run, **kwargs)

    monkeypatch.setattr(services.engine, "advance", advance_while_reset)
    running = process(running)
    assert running.status == Delivery.Status.PENDING  # its worker did not know, and set its retry
    monkeypatch.setattr(services.engine, "advance", real_advance)
    after = deliver(automation)  # sent while off, after the reset: kept for when it is turned on
    Delivery.objects.filter(pk=running.pk).update(not_before=timezone.now())
    automation_services.turn_on(automation=automation)

    services.process_delivery(delivery_id=running.pk)
    services.process_delivery(delivery_id=after.pk)

    assert not Delivery.objects.filter(pk=running.pk).exists()
    assert Delivery.objects.get(pk=after.pk).run is not None
    assert Run.objects.count() == 2  # the first attempt's run stays in Execution History, and the later one


def test_reset_needs_the_automation_off(make_automation):
    from automations.exceptions import NotOff

    with pytest.raises(NotOff):
        automation_services.reset(automation=make_automation(RECORD))


def test_deleting_discards_queued_deliveries(make_automation):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    automation_services.delete_automation(automation=automation)
    assert not Delivery.objects.exists()
    services.process_delivery(delivery_id=delivery.pk)  # a task already queued finds nothing to do
    assert not Run.objects.exists()


def test_an_automation_deleted_while_its_run_is_in_progress_ends_the_task_quietly(make_automation, monkeypatch):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    real_advance = services.engine.advance

    def advance_then_delete(run, **kwargs):
        response = real_advance(run, **kwargs)
        automation_services.delete_automation(automation=automation)  # the owner deletes it meanwhile
        return response

    monkeypatch.setattr(services.engine, "advance", advance_then_delete)
    services.process_delivery(delivery_id=delivery.pk)  # no error for the worker's log
    assert not Delivery.objects.exists()
    assert not Run.objects.exists()


def test_a_delivery_whose_worker_was_lost_runs_again_once_its_lease_ends(make_automation):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    assert services._claim(delivery.pk, uuid.uuid4())  # a worker took it, started a run, and died
    lost_run = runs.start(automation=automation, trigger={}, source=Run.Source.WEBHOOK)
    Delivery.objects.filter(pk=delivery.pk).update(run=lost_run)
    process(delivery)  # the lease still holds: nobody else may take it
    assert Delivery.objects.get(pk=delivery.pk).status == Delivery.Status.RUNNING
    Delivery.objects.filter(pk=delivery.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    delivery = process(delivery)
    assert delivery.status == Delivery.Status.DONE
    lost_run.refresh_from_db()
    assert lost_run.status == Run.Status.ABANDONED
    assert Run.objects.filter(status=Run.Status.SUCCEEDED).count() == 1


def test_a_worker_that_lost_its_claim_cannot_complete_the_delivery(make_automation):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    slow = uuid.uuid4()
    claimed = services._claim(delivery.pk, slow)
    claimed.automation = automation
    run = services._start(claimed, automation, slow)  # the slow worker's run, held by its claim
    Delivery.objects.filter(pk=delivery.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert process(delivery).status == Delivery.Status.DONE  # a second worker takes over and completes it
    run.status = Run.Status.SUCCEEDED
    services._finish(claimed, slow, run)  # the slow one finishes late: its outcome is dropped
    run.refresh_from_db()
    assert run.status == Run.Status.ABANDONED
    assert Run.objects.filter(status=Run.Status.SUCCEEDED).count() == 1
    assert Delivery.objects.get(pk=delivery.pk).status == Delivery.Status.DONE


def test_the_sweeper_queues_stale_pending_and_lost_deliveries(make_automation, eager_tasks, settings):
    automation = make_automation(RECORD)
    stale = deliver(automation)
    fresh = deliver(automation, body=b"2")
    Delivery.objects.filter(pk=stale.pk).update(
        received_at=timezone.now() - timedelta(seconds=settings.DELIVERY_SWEEP_SECONDS + 1)
    )
    assert services.sweep() == 1
    stale.refresh_from_db()
    assert stale.status == Delivery.Status.DONE
    fresh.refresh_from_db()
    assert fresh.status == Delivery.Status.DONE  # taken by the same automation's replay, oldest first


def test_a_run_that_cannot_start_is_retried_then_failed_with_its_reason(make_automation, monkeypatch):
    automation = make_automation(RECORD, settings={"retries": {"max_attempts": 2, "backoff_seconds": 30}})
    delivery = deliver(automation)

    def start_run_that_raises(**kwargs):
        Run.objects.create(**{name: value for name, value in kwargs.items() if name != "claim"})  # rolled back
        raise RuntimeError("a fault of ours")

    monkeypatch.setattr(runs, "start", start_run_that_raises)
    delivery = process(delivery)  # nothing is raised to the task: the delivery ends or waits for its retry
    assert (delivery.status, delivery.attempts, delivery.claim) == (Delivery.Status.PENDING, 1, None)
    assert delivery.error == "its run could not be started (RuntimeError)"
    assert delivery.not_before > timezone.now()
    first = Run.objects.get()  # Execution History shows the attempt, with the reason
    assert (first.status, first.error, first.trigger, first.attempt) == (Run.Status.FAILED, delivery.error, {}, 1)
    Delivery.objects.filter(pk=delivery.pk).update(not_before=timezone.now())
    delivery = process(delivery)
    assert (delivery.status, delivery.attempts) == (Delivery.Status.FAILED, 2)
    assert delivery.run.error == "its run could not be started (RuntimeError)"
    monkeypatch.undo()
    assert process(delivery).status == Delivery.Status.FAILED  # ended: never taken again


def test_a_worker_whose_run_start_loses_to_a_delete_ends_quietly(make_automation, monkeypatch, caplog):
    automation = make_automation(RECORD)
    delivery = deliver(automation)

    def deleted_meanwhile(delivery, automation, claim):
        Delivery.objects.filter(pk=delivery.pk).delete()
        automation.delete()
        raise OperationalError("deadlock detected")  # or IntegrityError: PostgreSQL fails one of the two

    monkeypatch.setattr(services, "_start", deleted_meanwhile)
    services.process_delivery(delivery_id=delivery.pk)
    assert not Run.objects.exists()
    assert not [record for record in caplog.records if record.levelname == "ERROR"]


def test_a_worker_lost_after_its_claim_leaves_the_delivery_to_the_next_claim_once_the_lease_lapses(make_automation):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    assert services._claim(delivery.pk, uuid.uuid4()) is not None  # the claim committed, then the worker died
    assert process(delivery).status == Delivery.Status.RUNNING  # its lease still holds
    Delivery.objects.filter(pk=delivery.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    delivery = process(delivery)
    assert (delivery.status, delivery.attempts) == (Delivery.Status.DONE, 2)
    assert list(Run.objects.values_list("status", "attempt")) == [(Run.Status.SUCCEEDED, 2)]


def test_a_delivery_that_loses_every_worker_is_failed_after_its_attempts_and_two_more(make_automation):
    automation = make_automation(RECORD, settings={"retries": {"max_attempts": 1}})
    delivery = deliver(automation)
    for _ in range(1 + services.LOST_WORKER_CLAIMS):
        assert services._claim(delivery.pk, uuid.uuid4()) is not None
        Delivery.objects.filter(pk=delivery.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    delivery = process(delivery)
    assert (delivery.status, delivery.attempts) == (Delivery.Status.FAILED, 4)
    assert delivery.error == "its run did not finish in 3 attempts"
    assert delivery.run.status == Run.Status.FAILED
    assert not LookupRow.objects.exists()


def test_a_run_past_its_time_limit_fails_before_its_lease_runs_out(make_automation, settings):
    settings.DELIVERY_LEASE_SECONDS = 0  # the run may take nine tenths of it: no step may start
    automation = make_automation(RECORD, settings={"retries": {"max_attempts": 1}})
    delivery = process(deliver(automation))
    assert delivery.run.status == Run.Status.FAILED
    assert delivery.run.error == "step who: the run passed its time limit"
    assert not LookupRow.objects.exists()
    assert (delivery.status, delivery.claim) == (Delivery.Status.FAILED, None)


@pytest.fixture
def slow_app():
    """A local app that answers after 3 seconds."""
    with serving(slow_handler(3)) as url:
        yield url + "/"


def test_a_step_waits_no_longer_than_the_time_its_run_has_left(make_automation, settings, slow_app):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    settings.DELIVERY_LEASE_SECONDS = 1  # 0.9 s for the run, against the app's 3 s and the step's 30 s timeout
    automation = make_automation(
        [{"id": "call", "kind": "http_request", "method": "POST", "url": slow_app}],
        settings={"retries": {"max_attempts": 1}},
    )
    delivery = process(deliver(automation))
    assert delivery.run.status == Run.Status.FAILED
    assert delivery.run.steps[0]["status"] == "failed"
    assert delivery.status == Delivery.Status.FAILED
