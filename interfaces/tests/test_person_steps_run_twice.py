"""A step that asks a person, run a second time for the same run (its worker lost after the step acted, before the
run was saved as waiting): it finds the link or the item the first execution made and waits on it, without a second
mail or a second item."""

import re
import smtplib
import threading
import uuid
from datetime import timedelta

import pytest
from django.core import mail
from django.core.mail.backends import locmem
from django.db import connection
from django.utils import timezone

from automations import engine, runs
from automations.models import Run, StepEffect
from interfaces.approvals import queues
from interfaces.models import ApprovalItem, ApprovalQueue
from interfaces.tests.support import ASK_THEN_RECORD
from publickeys.models import PublicKey

pytestmark = pytest.mark.django_db

ASK_BY_MAIL = {
    "id": "ask",
    "kind": "form",
    "title": "Approve the refund?",
    "email": "boss@example.com",
    "fields": [{"name": "amount", "type": "number", "min": 0, "required": True}],
    "expires_after": 3600,
}
AFTER = {"id": "after", "kind": "set_values", "values": {"refund": "{{steps.ask.amount}}"}}


class WorkerKilled(BaseException):
    """The worker's process ends here: nothing after it runs (the engine catches Exception, not this)."""


def queued_run(automation) -> Run:
    """A webhook's run of the automation, queued for a worker (waiting, due now, no step done)."""
    return runs.queue(automation=automation, trigger={"body": {"order": 7, "customer": "Ada"}}, source="webhook")


def worker_lost_after_the_step_acted(run_id: int) -> None:
    """A worker takes the run and its steps run up to the wait; it dies before saving the run (no settle)."""
    Run.objects.filter(pk=run_id).update(
        status=Run.Status.RUNNING, claim=uuid.uuid4(), lease_until=timezone.now() - timedelta(seconds=1)
    )
    run = Run.objects.select_related("automation").get(pk=run_id)
    engine.advance(run)
    assert run.status == Run.Status.WAITING  # in this worker's memory only: it is lost now


def next_worker_goes_on(run_id: int) -> Run:
    """The sweeper finds the run's lease lapsed, gives it back and queues it; the next worker takes it and runs the
    step again (here, or in the sweep itself where tasks run eagerly)."""
    runs.sweep()
    runs.resume(run_id)
    run = Run.objects.get(pk=run_id)
    assert (run.lost_workers, run.claim) == (1, None)
    return run


def link_path(message) -> str:
    return re.search(r"https?://[^/\s]+(/form/s/\S+)", message.body).group(1)


def one_time_keys(run: Run):
    return PublicKey.objects.filter(purpose=PublicKey.Purpose.ONE_TIME_FORM, target_id=run.pk)


def test_a_form_step_run_again_mails_no_second_link_and_waits_on_the_first(client, make_automation):
    run = queued_run(make_automation([ASK_BY_MAIL, AFTER]))
    worker_lost_after_the_step_acted(run.pk)
    assert len(mail.outbox) == 1
    first_key = one_time_keys(run).get()
    run = next_worker_goes_on(run.pk)
    assert len(mail.outbox) == 1  # no second mail
    assert one_time_keys(run).get() == first_key and first_key.retired_at is None  # no second link
    assert run.status == Run.Status.WAITING and run.waiting_for["public_key_id"] == first_key.pk
    assert run.resume_at == first_key.expires_at  # the first execution's expiry, not a new one
    assert run.waiting_for["expires_at"] == first_key.expires_at.isoformat()
    mailed = link_path(mail.outbox[0])
    assert client.get(mailed).status_code == 200  # the link mailed works
    assert client.post(mailed, {"amount": "12"}).status_code == 200
    assert Run.objects.get(pk=run.pk).answer == {"amount": 12}


class DiesConnecting(locmem.EmailBackend):
    """The worker's process ends while it connects to the mail server: nothing is mailed."""

    def open(self):
        raise WorkerKilled


def test_a_form_step_whose_worker_died_before_mailing_mails_the_link_it_issued_once(settings, make_automation):
    run = queued_run(make_automation([ASK_BY_MAIL, AFTER]))
    mailing = settings.EMAIL_BACKEND
    settings.EMAIL_BACKEND = f"{__name__}.DiesConnecting"
    with pytest.raises(WorkerKilled):
        worker_lost_after_the_step_acted(run.pk)
    issued = one_time_keys(run).get()
    assert not mail.outbox
    settings.EMAIL_BACKEND = mailing
    run = next_worker_goes_on(run.pk)
    assert len(mail.outbox) == 1 and one_time_keys(run).get() == issued
    assert run.waiting_for["public_key_id"] == issued.pk
    assert StepEffect.objects.get(run=run).data["mailed"] is True


def test_a_session_form_step_run_again_keeps_its_first_expiry(make_form):
    ask = {name: value for name, value in ASK_BY_MAIL.items() if name != "email"}
    automation = make_form([{**ask, "to": "session"}])
    run = runs.queue(automation=automation, trigger={"body": {}}, source="form")
    worker_lost_after_the_step_acted(run.pk)
    first = StepEffect.objects.get(run=run).data["expires_at"]
    run = next_worker_goes_on(run.pk)
    assert run.waiting_for["to"] == "session" and run.waiting_for["expires_at"] == first
    assert run.resume_at.isoformat() == first


def test_an_approval_step_run_again_places_no_second_item_and_waits_on_the_first(
    make_automation, eager_tasks, django_capture_on_commit_callbacks
):
    run = queued_run(make_automation([{**ASK_THEN_RECORD[0], "expires_after": 600}, ASK_THEN_RECORD[1]]))
    worker_lost_after_the_step_acted(run.pk)
    item = ApprovalItem.objects.get()
    run = next_worker_goes_on(run.pk)
    assert ApprovalItem.objects.get() == item  # no second item
    assert run.status == Run.Status.WAITING and run.waiting_for["item_id"] == item.pk
    assert run.resume_at == item.expires_at
    pending, _ = queues.items_of(ApprovalQueue.objects.get())
    assert [view.id for view in pending] == [item.pk]
    with django_capture_on_commit_callbacks(execute=True):
        outcome = queues.decide(queue=item.queue, item_id=item.pk, decision="approved", comment="", address="192.0.2.1")
    assert outcome is queues.Outcome.DECIDED
    run.refresh_from_db()
    assert run.status == Run.Status.SUCCEEDED and run.steps[0]["output"]["item_id"] == item.pk


def test_a_later_step_of_the_same_run_still_gets_a_link_of_its_own(make_automation, eager_tasks):
    """Effects are per step position: a second form step of the run issues its own link and mails it."""
    second = {**ASK_BY_MAIL, "id": "again", "title": "And once more?"}
    run = queued_run(make_automation([ASK_BY_MAIL, second]))
    assert runs.resume(run.pk)
    first = one_time_keys(run).get()
    assert runs.answer(run.pk, step="ask", answer={"amount": 1})
    assert runs.resume(run.pk)
    run.refresh_from_db()
    assert run.waiting_for["step"] == "again" and len(mail.outbox) == 2
    live = one_time_keys(run).get(retired_at__isnull=True)
    assert live != first and run.waiting_for["public_key_id"] == live.pk
    assert StepEffect.objects.filter(run=run).count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_executions_of_the_step_at_once_place_one_item_and_both_wait_on_it(make_automation, monkeypatch):
    """A worker presumed lost that was only slow, and the next one: both inside the step at once (real threads)."""
    if connection.vendor != "postgresql":
        pytest.skip("row-level concurrency is PostgreSQL's (SQLite serializes every writer)")
    run = queued_run(make_automation(ASK_THEN_RECORD))
    queues.queue_of(run.automation)  # made by an earlier run: the two wait for each other only on the item's record
    both_inside = threading.Barrier(2, timeout=30)
    place = queues.place_item

    def place_together(**item):
        placed = place(**item)
        both_inside.wait()  # each has placed an item, neither has recorded it
        return placed

    monkeypatch.setattr(queues, "place_item", place_together)
    waited_on = []

    def execute():
        try:
            executed = Run.objects.select_related("automation").get(pk=run.pk)
            engine.advance(executed)
            waited_on.append(executed.waiting_for["item_id"])
        finally:
            connection.close()

    threads = [threading.Thread(target=execute) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    item = ApprovalItem.objects.get()
    assert waited_on == [item.pk, item.pk]
    assert StepEffect.objects.get().data["item_id"] == item.pk


class GoodbyeFails(locmem.EmailBackend):
    """A mail server that takes the message, then drops the connection at QUIT."""

    def close(self):
        raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")


class Refuses(locmem.EmailBackend):
    def send_messages(self, messages):
        raise smtplib.SMTPRecipientsRefused({"boss@example.com": (550, b"no such mailbox")})


def test_a_mail_server_that_fails_its_goodbye_after_taking_the_mail_does_not_fail_the_step(settings, make_automation):
    settings.EMAIL_BACKEND = f"{__name__}.GoodbyeFails"
    run = queued_run(make_automation([ASK_BY_MAIL, AFTER]))
    assert runs.resume(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.WAITING and len(mail.outbox) == 1
    assert StepEffect.objects.get(run=run).data["mailed"] is True


def test_a_mail_server_that_refuses_the_mail_fails_the_step_with_its_reason(settings, make_automation):
    settings.EMAIL_BACKEND = f"{__name__}.Refuses"
    run = queued_run(make_automation([ASK_BY_MAIL, AFTER]))
    assert runs.resume(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert run.error == "step ask: the form could not be mailed to boss@example.com: SMTPRecipientsRefused"
