"""Runs that wait: the delay step, resuming once, the definition a run started with, and lost resumed runs."""

import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from automations import runs, services
from automations.models import LookupRow, Run
from hooks import deliveries as hook_deliveries
from hooks import services as hook_services
from hooks.incoming import Incoming
from hooks.models import Delivery

pytestmark = pytest.mark.django_db

WAIT_THEN_RECORD = [
    {"id": "pause", "kind": "delay", "seconds": 3600},
    {"id": "log", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"n": "{{trigger.body.n}}"}},
]


def deliver(automation, body=b'{"n": 1}'):
    accepted = hook_services.accept_delivery(
        automation_id=automation.pk, incoming=Incoming("POST", "/automation-k", "", "application/json", body)
    )
    hook_deliveries.process_delivery(delivery_id=accepted.pk)
    return Delivery.objects.select_related("run").get(pk=accepted.pk)


def make_due(run: Run) -> None:
    Run.objects.filter(pk=run.pk).update(resume_at=timezone.now() - timedelta(seconds=1))


def test_a_delay_makes_the_run_wait_and_its_delivery_done(make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    delivery = deliver(automation)
    run = delivery.run
    assert delivery.status == Delivery.Status.DONE
    assert (run.status, run.claim, run.lease_until, run.finished_at) == (Run.Status.WAITING, None, None, None)
    assert run.waiting_for["kind"] == "delay" and run.waiting_for["step"] == "pause"
    assert timedelta(minutes=59) < run.resume_at - timezone.now() <= timedelta(hours=1)
    assert [step["status"] for step in run.steps] == ["waiting"]
    assert not LookupRow.objects.exists()


def test_a_waiting_run_goes_on_only_once_its_time_has_come(make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    assert runs.resume(run.pk) is False  # an hour early
    make_due(run)
    assert runs.resume(run.pk) is True
    run.refresh_from_db()
    assert run.status == Run.Status.SUCCEEDED
    assert run.steps[0]["status"] == "succeeded"
    assert run.steps[0]["output"] == {"waited_until": run.steps[0]["waited_for"]["until"]}
    assert (run.waiting_for, run.resume_at, run.claim) == (None, None, None)
    assert LookupRow.objects.get().data == {"n": 1}
    assert runs.resume(run.pk) is False  # once only


def test_a_resumed_run_follows_the_definition_it_started_with(make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    changed = {
        "trigger": {"type": "webhook"},
        "steps": [
            {"id": "other", "kind": "set_values", "values": {"x": 1}},
            {"id": "pause", "kind": "delay", "seconds": 5},
        ],
    }
    services.update_automation(automation=automation, definition=changed)
    make_due(run)
    runs.resume(run.pk)
    run.refresh_from_db()
    assert [step["id"] for step in run.steps] == ["pause", "log"]
    assert run.status == Run.Status.SUCCEEDED
    assert LookupRow.objects.count() == 1


def test_the_sweeper_and_a_stray_task_never_retry_a_waiting_run(make_automation, eager_tasks, settings):
    automation = make_automation(WAIT_THEN_RECORD)
    delivery = deliver(automation)
    Delivery.objects.filter(pk=delivery.pk).update(
        received_at=timezone.now() - timedelta(seconds=settings.DELIVERY_SWEEP_SECONDS + 1)
    )
    assert hook_deliveries.queue_pending() == 0
    hook_deliveries.process_delivery(delivery_id=delivery.pk)  # a stray task for it changes nothing
    assert list(Run.objects.values_list("status", "attempt")) == [(Run.Status.WAITING, 1)]
    assert runs.sweep() == 0  # not due for an hour


def test_a_duplicate_of_a_waiting_runs_delivery_is_suppressed(make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    first = deliver(automation)
    second = deliver(automation)
    assert second.status == Delivery.Status.SUPPRESSED
    assert second.suppressed_by_id == first.run_id


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="races between connections need PostgreSQL")
def test_two_racing_resumes_go_on_once(make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    make_due(run)
    start, results = threading.Barrier(2), []

    def resume():
        try:
            start.wait(10)
            results.append(runs.resume(run.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=resume) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(results) == [False, True]
    assert LookupRow.objects.count() == 1
    assert Run.objects.get().status == Run.Status.SUCCEEDED


def test_a_resumed_run_whose_worker_was_lost_waits_again_then_is_abandoned(make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    for lost in range(1, runs.LOST_WORKER_LIMIT + 1):
        # A worker took it and died: running, under a lapsed lease.
        Run.objects.filter(pk=run.pk).update(
            status=Run.Status.RUNNING, claim=uuid.uuid4(), lease_until=timezone.now() - timedelta(seconds=1)
        )
        runs.sweep()
        run.refresh_from_db()
        assert (run.status, run.lost_workers) == (Run.Status.WAITING, lost)
        assert run.resume_at <= timezone.now()
        assert [step["status"] for step in run.steps] == ["waiting"]  # it goes on at the step that waited
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.RUNNING, claim=uuid.uuid4(), lease_until=timezone.now() - timedelta(seconds=1)
    )
    runs.sweep()
    run.refresh_from_db()
    assert run.status == Run.Status.ABANDONED
    assert "worker was lost" in run.error


def test_a_worker_whose_resumed_run_was_given_back_cannot_settle_it(make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    slow = uuid.uuid4()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, claim=slow, lease_until=timezone.now())
    runs.sweep()  # given back to waiting
    late = Run.objects.get(pk=run.pk)
    late.status = Run.Status.SUCCEEDED
    assert runs.settle(late, slow) is False
    assert Run.objects.get(pk=run.pk).status == Run.Status.WAITING


@pytest.mark.parametrize(
    ("settings_", "waits"),
    [
        ({"seconds": 0}, False),
        ({"seconds": "{{trigger.body.n}}"}, True),
        ({"until": "2000-01-01T00:00:00"}, False),
        ({"until": (datetime.now(UTC) + timedelta(days=2)).isoformat()}, True),
        ({"until": "2999-01-01T00:00:00+00:00"}, None),  # beyond the longest wait
        ({"until": "{{trigger.body.missing}}"}, None),
        ({"until": "next tuesday"}, None),
        ({"seconds": "NaN"}, None),
        ({"seconds": "-5"}, None),
    ],
)
def test_a_delay_waits_for_what_its_settings_say(make_automation, settings_, waits):
    automation = make_automation([{"id": "pause", "kind": "delay", **settings_}])
    run = deliver(automation, body=b'{"n": 30}').run
    expected = {True: Run.Status.WAITING, False: Run.Status.SUCCEEDED, None: Run.Status.FAILED}[waits]
    assert run.status == expected, run.steps


def test_a_delay_setting_must_be_one_of_seconds_or_until():
    from automations import definition

    for step in ({"id": "p", "kind": "delay"}, {"id": "p", "kind": "delay", "seconds": 1, "until": "2030-01-01"}):
        assert definition.errors({"trigger": {"type": "webhook"}, "steps": [step]})


def test_the_sweeper_queues_due_runs_and_they_go_on(make_automation, eager_tasks):
    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    make_due(run)
    assert runs.sweep() == 1
    run.refresh_from_db()
    assert run.status == Run.Status.SUCCEEDED


def test_a_web_service_call_that_reaches_a_delay_gets_202(make_automation, client, settings):
    from automations import services as automation_services

    automation = make_automation(WAIT_THEN_RECORD)
    url = automation_services.web_service_url(automation)
    response = client.post(url.removeprefix(settings.HOOKS_URL), b'{"n": 2}', content_type="application/json")
    assert response.status_code == 202
    run = Run.objects.get()
    assert response.json() == {"status": "waiting", "run_id": run.pk}
    assert run.status == Run.Status.WAITING


def test_execution_history_shows_a_waiting_run_what_it_waits_for_and_when_it_goes_on(staff_client, make_automation):
    automation = make_automation(WAIT_THEN_RECORD)
    run = deliver(automation).run
    listing = staff_client.get("/admin/automations/run/").content.decode()
    assert "Execution History" in listing
    assert f"waiting: step pause (delay), goes on at {run.resume_at:%Y-%m-%d %H:%M:%S} UTC" in listing
    page = staff_client.get(f"/admin/automations/run/{run.pk}/change/").content.decode()
    assert "Waits for" in page and run.waiting_for["until"] in page


@pytest.fixture
def echo_answer(monkeypatch):
    """The delay step stands in for a step that asks a person: its resume() returns the answer it got."""
    from automations.steps import delay

    monkeypatch.setattr(delay, "resume", lambda waiting_for, answer: {"answer": answer})


def test_a_persons_answer_resumes_the_run_at_once_with_that_answer(
    make_automation, echo_answer, eager_tasks, django_capture_on_commit_callbacks
):
    run = deliver(make_automation(WAIT_THEN_RECORD)).run
    with django_capture_on_commit_callbacks(execute=True):
        assert runs.answer(run.pk, step="pause", answer={"approved": True}) is True
    run.refresh_from_db()
    assert run.status == Run.Status.SUCCEEDED
    assert run.steps[0]["output"] == {"answer": {"approved": True}}
    assert run.answer is None  # kept only until the run went on with it
    assert LookupRow.objects.count() == 1


def test_of_two_answers_only_the_first_counts(make_automation, echo_answer):
    run = deliver(make_automation(WAIT_THEN_RECORD)).run
    assert runs.answer(run.pk, step="pause", answer={"n": 1}) is True
    assert runs.answer(run.pk, step="pause", answer={"n": 2}) is False
    assert runs.resume(run.pk) is True  # due at once: the answer set its time to now
    run.refresh_from_db()
    assert run.steps[0]["output"] == {"answer": {"n": 1}}


def test_an_answer_to_another_step_or_a_run_not_waiting_is_refused(make_automation):
    run = deliver(make_automation(WAIT_THEN_RECORD)).run
    assert runs.answer(run.pk, step="log", answer={}) is False
    make_due(run)
    runs.resume(run.pk)
    assert runs.answer(run.pk, step="pause", answer={}) is False
    with pytest.raises(ValueError):
        runs.answer(run.pk, step="pause", answer=None)


def test_an_answer_whose_task_was_lost_is_taken_up_by_the_sweeper(make_automation, echo_answer, eager_tasks):
    run = deliver(make_automation(WAIT_THEN_RECORD)).run
    assert runs.answer(run.pk, step="pause", answer={"n": 7}) is True  # its on-commit task never runs here
    runs.sweep()
    run.refresh_from_db()
    assert (run.status, run.steps[0]["output"]) == (Run.Status.SUCCEEDED, {"answer": {"n": 7}})


def test_an_answer_survives_a_worker_lost_while_going_on_with_it(make_automation, echo_answer):
    run = deliver(make_automation(WAIT_THEN_RECORD)).run
    runs.answer(run.pk, step="pause", answer={"n": 3})
    # A worker takes the run and dies: its lease runs out, and the sweeper gives the run back to waiting.
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.RUNNING, claim=uuid.uuid4(), lease_until=timezone.now() - timedelta(seconds=1)
    )
    runs.sweep()
    assert runs.resume(run.pk) is True
    run.refresh_from_db()
    assert run.steps[0]["output"] == {"answer": {"n": 3}}


@pytest.mark.parametrize(
    ("on_expiry", "outcome"),
    [("fail", "failed"), ({"continue_with": {"approved": False}}, "succeeded")],
)
def test_a_person_wait_that_expires_does_what_its_step_says(on_expiry, outcome):
    from automations import waiting
    from automations.steps import StepFailed

    wait = waiting.person_wait("approval", {"expires_after": 60, "on_expiry": on_expiry}, queue=5)
    assert timedelta(seconds=59) < wait.until - timezone.now() <= timedelta(seconds=60)
    assert wait.waiting_for["queue"] == 5 and wait.waiting_for["expires_at"] == wait.until.isoformat()
    if outcome == "failed":
        with pytest.raises(StepFailed, match="expired"):
            waiting.expired_output(wait.waiting_for)
    else:
        assert waiting.expired_output(wait.waiting_for) == {"approved": False}
    assert waiting.person_wait("form", {}).until is None  # no expiry: waits until answered


def test_a_queued_run_waits_due_now_and_its_worker_runs_it_from_the_first_step(
    make_automation, django_capture_on_commit_callbacks, monkeypatch
):
    from automations import tasks

    queued = []
    monkeypatch.setattr(tasks.resume_run, "delay", queued.append)
    automation = make_automation(
        [{"id": "log", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"n": 1}}]
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = runs.queue(automation=automation, trigger={"message": "hi"}, source=Run.Source.CHAT)
    assert queued == [run.pk]  # once committed
    run.refresh_from_db()
    assert (run.status, run.waiting_for, run.steps) == (Run.Status.WAITING, {"kind": "start", "step": ""}, [])
    assert run.resume_at <= timezone.now()
    assert runs.resume(run.pk) is True
    assert runs.resume(run.pk) is False  # once only
    run.refresh_from_db()
    assert run.status == Run.Status.SUCCEEDED and [step["id"] for step in run.steps] == ["log"]
    assert LookupRow.objects.count() == 1


def test_a_queued_run_whose_task_was_lost_is_queued_again_by_the_sweeper(make_automation, monkeypatch):
    from automations import tasks

    queued = []
    monkeypatch.setattr(tasks.resume_run, "delay", queued.append)
    monkeypatch.setattr(tasks.resume_run, "apply_async", lambda args, eta: queued.append(args[0]))
    automation = make_automation([{"id": "v", "kind": "set_values", "values": {"a": 1}}])
    run = runs.queue(automation=automation, trigger={}, source=Run.Source.CHAT)  # its on_commit never comes here
    assert queued == []
    runs.sweep()
    assert queued == [run.pk]


def test_an_answer_after_the_wait_expired_is_refused_before_the_sweeper_comes_by(make_automation):
    run = deliver(make_automation(WAIT_THEN_RECORD)).run
    make_due(run)  # its resume_at, a person's wait's expiry, has passed
    assert runs.answer(run.pk, step="pause", answer={"late": True}) is False
    run.refresh_from_db()
    assert run.answer is None


def test_a_run_that_fails_after_it_waited_is_not_retried(make_automation):
    automation = make_automation(
        [WAIT_THEN_RECORD[0], {"id": "call", "kind": "http_request", "url": "not a url"}],
        settings={"retries": {"max_attempts": 3}},
    )
    run = deliver(automation).run
    make_due(run)
    assert runs.resume(run.pk) is True
    assert list(Run.objects.values_list("status", "attempt")) == [(Run.Status.FAILED, 1)]


def test_a_run_that_fails_before_any_wait_is_retried_from_its_first_step(make_automation):
    automation = make_automation(
        [{"id": "call", "kind": "http_request", "url": "not a url"}, WAIT_THEN_RECORD[0]],
        settings={"retries": {"max_attempts": 3, "backoff_seconds": 1}},
    )
    first = deliver(automation).run
    retry = Run.objects.get(attempt=2)
    assert (first.status, retry.retry_of, retry.steps, retry.definition) == ("failed", first, [], first.definition)
