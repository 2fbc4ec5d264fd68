"""Processing deliveries: runs, retries, suppression, off and on, reset, delete, and exactly-once completion."""

import uuid
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from automations import runs
from automations import services as automation_services
from automations.models import LookupRow, Run
from automations.services import ENDED_BY_RESET
from hooks import deliveries, services
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
    deliveries.process_delivery(delivery_id=delivery.pk)
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


def test_a_failed_run_is_retried_with_backoff_as_runs_of_its_own_then_given_up(make_automation):
    automation = make_automation(
        [{"id": "cond", "kind": "http_request", "url": "not a url"}],
        settings={"retries": {"max_attempts": 2, "backoff_seconds": 30}},
    )
    delivery = process(deliver(automation))
    assert delivery.status == Delivery.Status.DONE  # it became its run; retries are the run's business
    assert delivery.run.status == Run.Status.FAILED
    assert "not an http(s) URL" in delivery.run.error
    retry = Run.objects.get(attempt=2)
    assert (retry.status, retry.trigger, retry.retry_of) == ("waiting", delivery.run.trigger, delivery.run)
    assert timedelta(seconds=25) < retry.resume_at - timezone.now() <= timedelta(seconds=30)
    assert runs.resume(retry.pk) is False  # not due yet: nothing happens
    Run.objects.filter(pk=retry.pk).update(resume_at=timezone.now())
    assert runs.resume(retry.pk) is True
    assert list(Run.objects.order_by("pk").values_list("status", "attempt")) == [("failed", 1), ("failed", 2)]
    assert list(delivery.run.retries.all()) == [retry]  # every attempt points at the first


def test_a_retry_waits_while_its_automation_is_off_and_runs_once_it_is_on(make_automation, eager_tasks):
    automation = make_automation(
        [{"id": "cond", "kind": "http_request", "url": "not a url"}],
        settings={"retries": {"max_attempts": 2, "backoff_seconds": 30}},
    )
    process(deliver(automation))
    automation_services.turn_off(automation=automation)
    Run.objects.filter(attempt=2).update(resume_at=timezone.now())
    runs.sweep()  # due, but its automation is off: left queued
    assert Run.objects.get(attempt=2).status == Run.Status.WAITING
    assert runs.resume(Run.objects.get(attempt=2).pk) is False  # a task queued for it earlier leaves it too
    assert Run.objects.get(attempt=2).status == Run.Status.WAITING
    automation_services.turn_on(automation=automation)
    runs.sweep()
    assert Run.objects.get(attempt=2).status == Run.Status.FAILED


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


def test_a_duplicate_of_a_delivery_whose_run_has_not_started_yet_is_not_suppressed(make_automation):
    """Suppression begins once a run succeeded (SPEC 6.3): a queued run may still fail, and its retries would pass."""
    automation = make_automation(RECORD)
    first = deliver(automation)
    deliveries.start_runs(delivery_id=first.pk)  # queued; its worker has not gone on with it yet
    second = process(deliver(automation))
    assert (second.status, second.run.status) == (Delivery.Status.DONE, Run.Status.SUCCEEDED)


def test_a_failed_run_starts_no_suppression(make_automation, django_capture_on_commit_callbacks):
    automation = make_automation(
        [{"id": "cond", "kind": "http_request", "url": "nope"}], settings={"retries": {"max_attempts": 1}}
    )
    with django_capture_on_commit_callbacks():
        process(deliver(automation))
        second = process(deliver(automation))
    assert (second.status, second.run.status) == (Delivery.Status.DONE, Run.Status.FAILED)
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
    automation = make_automation([{"id": "cond", "kind": "http_request", "url": "not a url"}])
    failed = process(deliver(automation, body=b"2"))  # its retry is queued
    automation_services.turn_off(automation=automation)
    deliver(automation)
    LookupRow.objects.create(owner=owner, automation=automation, table="seen", data={"n": 1})
    shared = LookupRow.objects.create(owner=owner, automation=None, table="seen", data={"n": 2})
    automation.trigger_state = {"cursor": 5}
    automation.save()
    with django_capture_on_commit_callbacks(execute=True):  # hooks discards the deliveries once reset commits
        automation_services.reset(automation=automation)
    assert list(Delivery.objects.all()) == [failed]  # it became its run before the reset
    retry = Run.objects.get(attempt=2)
    assert (retry.status, retry.error) == (Run.Status.FAILED, f"ended while it waited: {ENDED_BY_RESET}")
    assert list(LookupRow.objects.all()) == [shared]
    automation.refresh_from_db()
    assert automation.trigger_state == {}


def test_a_run_going_on_during_a_reset_makes_no_retry_and_later_deliveries_run(
    make_automation, monkeypatch, django_capture_on_commit_callbacks
):
    automation = make_automation(
        [{"id": "cond", "kind": "http_request", "url": "not a url"}],
        settings={"retries": {"max_attempts": 3, "backoff_seconds": 30}},
    )
    running = deliver(automation)
    real_advance = runs.engine.advance

    def advance_while_reset(run, **kwargs):
        automation_services.turn_off(automation=automation)  # the owner turns it off and resets it meanwhile
        with django_capture_on_commit_callbacks(execute=True):  # the reset commits (and discards) before the run ends
            automation_services.reset(automation=automation)
        return real_advance(run, **kwargs)

    monkeypatch.setattr(runs.engine, "advance", advance_while_reset)
    running = process(running)
    monkeypatch.setattr(runs.engine, "advance", real_advance)
    assert list(Run.objects.values_list("status", "attempt")) == [("failed", 1)]  # its attempt ended; no retry
    after = deliver(automation)  # sent while off, after the reset: kept for when it is turned on
    automation_services.turn_on(automation=automation)
    process(after)
    assert Delivery.objects.get(pk=after.pk).run.status == Run.Status.FAILED
    assert Run.objects.filter(attempt=2).count() == 1  # the later delivery's run is retried as usual


def test_reset_needs_the_automation_off(make_automation):
    from automations.exceptions import NotOff

    with pytest.raises(NotOff):
        automation_services.reset(automation=make_automation(RECORD))


def test_deleting_discards_queued_deliveries(make_automation):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    automation_services.delete_automation(automation=automation)
    assert not Delivery.objects.exists()
    deliveries.process_delivery(delivery_id=delivery.pk)  # a task already queued finds nothing to do
    assert not Run.objects.exists()


def test_an_automation_deleted_while_its_run_is_in_progress_ends_the_task_quietly(make_automation, monkeypatch):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    real_advance = runs.engine.advance

    def advance_then_delete(run, **kwargs):
        response = real_advance(run, **kwargs)
        automation_services.delete_automation(automation=automation)  # the owner deletes it meanwhile
        return response

    monkeypatch.setattr(runs.engine, "advance", advance_then_delete)
    deliveries.process_delivery(delivery_id=delivery.pk)  # no error for the worker's log
    assert not Delivery.objects.exists()
    assert not Run.objects.exists()


def test_a_worker_lost_between_making_the_run_and_going_on_leaves_it_to_the_sweeper(make_automation, eager_tasks):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    [run_id] = [run.pk for run in deliveries.start_runs(delivery_id=delivery.pk)]  # committed; then the worker died
    assert Run.objects.get(pk=run_id).status == Run.Status.WAITING
    runs.sweep()
    assert Run.objects.get(pk=run_id).status == Run.Status.SUCCEEDED
    assert LookupRow.objects.count() == 1


def lose_the_worker_of(run_id: int) -> None:
    """A worker took the run and died: its claim stays until its lease lapses."""
    Run.objects.filter(pk=run_id).update(
        status=Run.Status.RUNNING, claim=uuid.uuid4(), lease_until=timezone.now() - timedelta(seconds=1)
    )


def test_a_run_whose_worker_was_lost_goes_on_once_its_lease_lapses(make_automation, eager_tasks):
    automation = make_automation(RECORD)
    [run_id] = [run.pk for run in deliveries.start_runs(delivery_id=deliver(automation).pk)]
    lose_the_worker_of(run_id)
    deliveries.process_delivery(delivery_id=Delivery.objects.get().pk)  # a stray task: the run is not its own
    assert Run.objects.get().status == Run.Status.RUNNING
    runs.sweep()  # given back to waiting, and resumed
    run = Run.objects.get()
    assert (run.status, run.lost_workers, run.attempt) == (Run.Status.SUCCEEDED, 1, 1)
    assert LookupRow.objects.count() == 1


def test_a_worker_that_lost_its_claim_cannot_complete_the_run(make_automation, monkeypatch):
    automation = make_automation(RECORD)
    [run_id] = [run.pk for run in deliveries.start_runs(delivery_id=deliver(automation).pk)]
    real_advance, late = runs.engine.advance, []

    def slow_advance(run, **kwargs):
        response = real_advance(run, **kwargs)
        if not late:  # the first worker: its lease lapses, and a second worker takes the run over and completes it
            late.append(run)
            Run.objects.filter(pk=run.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
            runs.sweep()
            assert runs.resume(run.pk) is True
        return response

    monkeypatch.setattr(runs.engine, "advance", slow_advance)
    assert runs.resume(run_id) is True  # the slow one finishes late: its outcome is dropped
    run = Run.objects.get()
    assert (run.status, run.lost_workers) == (Run.Status.SUCCEEDED, 1)
    assert LookupRow.objects.count() == 2  # each worker's step acted (the lease is what bounds that)


def test_a_run_that_loses_every_worker_is_abandoned_with_its_reason(make_automation):
    automation = make_automation(RECORD, settings={"retries": {"max_attempts": 3}})
    [run_id] = [run.pk for run in deliveries.start_runs(delivery_id=deliver(automation).pk)]
    for _ in range(runs.LOST_WORKER_LIMIT + 1):
        lose_the_worker_of(run_id)
        runs.sweep()
    run = Run.objects.get()
    assert (run.status, run.error) == (Run.Status.ABANDONED, "its worker was lost 3 times while it ran")
    assert Run.objects.count() == 1  # not retried: a run that kills every worker must end
    assert Delivery.objects.get().status == Delivery.Status.DONE


def test_the_sweeper_queues_stale_pending_deliveries(make_automation, eager_tasks, settings):
    automation = make_automation(RECORD)
    stale = deliver(automation)
    fresh = deliver(automation, body=b"2")
    Delivery.objects.filter(pk=stale.pk).update(
        received_at=timezone.now() - timedelta(seconds=settings.DELIVERY_SWEEP_SECONDS + 1)
    )
    runs.sweep()
    stale.refresh_from_db()
    assert stale.status == Delivery.Status.DONE
    assert stale.run.status == Run.Status.SUCCEEDED
    fresh.refresh_from_db()
    assert fresh.status == Delivery.Status.DONE  # taken by the same automation's replay, oldest first


def test_a_run_that_cannot_start_is_failed_with_its_reason(make_automation, monkeypatch):
    automation = make_automation(RECORD, settings={"retries": {"max_attempts": 2, "backoff_seconds": 30}})
    delivery = deliver(automation)

    def queue_that_raises(wanted, **kwargs):
        Run.objects.create(automation=wanted[0].automation, source="webhook")  # rolled back
        raise RuntimeError("a fault of ours")

    monkeypatch.setattr(runs, "queue_all", queue_that_raises)
    delivery = process(delivery)  # nothing is raised to the task: the delivery ends
    assert (delivery.status, delivery.error) == (Delivery.Status.FAILED, "its run could not be started (RuntimeError)")
    run = Run.objects.get()  # Execution History shows the attempt, with the reason
    assert (run.status, run.error, run.trigger, run.attempt) == (Run.Status.FAILED, delivery.error, {}, 1)
    assert delivery.run == run
    monkeypatch.undo()
    assert process(delivery).status == Delivery.Status.FAILED  # ended: never taken again


def test_a_run_that_cannot_start_for_a_passing_database_fault_is_left_to_the_sweeper(make_automation, monkeypatch):
    automation = make_automation(RECORD)
    delivery = deliver(automation)
    monkeypatch.setattr(runs, "queue_all", lambda *a, **k: (_ for _ in ()).throw(OperationalError("lock timeout")))
    assert process(delivery).status == Delivery.Status.PENDING
    assert not Run.objects.exists()
    monkeypatch.undo()
    assert process(delivery).run.status == Run.Status.SUCCEEDED


def test_a_worker_whose_run_start_loses_to_a_delete_ends_quietly(make_automation, monkeypatch, caplog):
    automation = make_automation(RECORD)
    delivery = deliver(automation)

    def deleted_meanwhile(wanted, **kwargs):
        Delivery.objects.filter(pk=delivery.pk).delete()
        automation.delete()
        raise OperationalError("deadlock detected")  # or IntegrityError: PostgreSQL fails one of the two

    monkeypatch.setattr(runs, "queue_all", deleted_meanwhile)
    deliveries.process_delivery(delivery_id=delivery.pk)
    assert not Run.objects.exists()
    assert not [record for record in caplog.records if record.levelname == "ERROR"]


def test_a_run_past_its_time_limit_fails_before_its_lease_runs_out(make_automation, settings):
    settings.RUN_LEASE_SECONDS = 0  # the run may take nine tenths of it: no step may start
    automation = make_automation(RECORD, settings={"retries": {"max_attempts": 1}})
    delivery = process(deliver(automation))
    assert delivery.run.status == Run.Status.FAILED
    assert delivery.run.error == "step who: the run passed its time limit"
    assert not LookupRow.objects.exists()
    assert (delivery.run.claim, delivery.run.lease_until) == (None, None)


@pytest.fixture
def slow_app():
    """A local app that answers after 3 seconds."""
    with serving(slow_handler(3)) as url:
        yield url + "/"


def test_a_step_waits_no_longer_than_the_time_its_run_has_left(make_automation, settings, slow_app):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    settings.RUN_LEASE_SECONDS = 1  # 0.9 s for the run, against the app's 3 s and the step's 30 s timeout
    automation = make_automation(
        [{"id": "call", "kind": "http_request", "method": "POST", "url": slow_app}],
        settings={"retries": {"max_attempts": 1}},
    )
    delivery = process(deliver(automation))
    assert delivery.run.status == Run.Status.FAILED
    assert delivery.run.steps[0]["status"] == "failed"


def test_a_worker_holding_an_old_copy_of_a_queued_run_does_not_run_it_again(make_automation):
    """Another worker took the run meanwhile (the sweeper's task) and it waits at a step: the copy is refused."""
    log = {"id": "log", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"n": 1}}
    automation = make_automation([log, {"id": "pause", "kind": "delay", "seconds": 5}, {**log, "id": "again"}])
    [copy] = deliveries.start_runs(delivery_id=deliver(automation).pk)
    assert runs.resume(copy.pk) is True  # the other worker: the run now waits at the delay
    Run.objects.filter(pk=copy.pk).update(resume_at=timezone.now() - timedelta(seconds=1))  # and its time has come
    assert runs.resume(copy.pk, queued=copy) is False
    assert (Run.objects.get().status, LookupRow.objects.count()) == (Run.Status.WAITING, 1)


def test_turning_the_automation_off_keeps_the_rest_of_a_batch_queued_until_it_is_on(
    make_automation, monkeypatch, eager_tasks
):
    automation = make_automation(RECORD, settings={"suppress_duplicates": False})
    ids = [deliver(automation, body=b'{"n": %d}' % n).pk for n in range(3)]
    real_advance = runs.engine.advance

    def advance_then_turn_off(run, **kwargs):
        response = real_advance(run, **kwargs)
        automation_services.turn_off(automation=automation)  # the owner turns it off during the first run
        return response

    monkeypatch.setattr(runs.engine, "advance", advance_then_turn_off)
    deliveries.process_deliveries(delivery_ids=ids)
    monkeypatch.setattr(runs.engine, "advance", real_advance)
    assert list(Run.objects.order_by("pk").values_list("status", flat=True)) == ["succeeded", "waiting", "waiting"]
    automation_services.turn_on(automation=automation)
    runs.sweep()
    assert list(Run.objects.order_by("pk").values_list("status", flat=True)) == ["succeeded"] * 3
