"""Accepting and processing webhook deliveries (DESIGN.md contract 1) and answering web service calls."""

import hashlib
import logging
import time
import uuid
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.db.models import Max, Q
from django.utils import timezone

from automations import engine, jsonsafe, runs
from automations.models import Automation, Run
from automations.steps import PAST_TIME_LIMIT
from hooks import intake, statements, tasks
from hooks.incoming import Incoming
from hooks.models import Delivery
from hooks.trigger import trigger_data
from publickeys.redaction import redact

logger = logging.getLogger(__name__)

COMPLETED = (Run.Status.SUCCEEDED, Run.Status.STOPPED)  # a run stopped by a condition also completed
SETTLED = (*COMPLETED, Run.Status.WAITING)  # its delivery is done: a waiting run goes on without it


def accept_delivery(*, automation_id: int, incoming: Incoming) -> intake.Accepted:
    """Store the delivery and queue its run; returns once the row is committed (hooks/intake.py).

    The run is queued whether the automation is on or off: off, the task
    leaves the delivery kept for replay. Raises intake.AutomationGone when
    the automation was deleted a moment ago.
    """
    accepted = new_delivery(automation_id=automation_id, incoming=incoming)
    intake.store(accepted)
    return accepted


def new_delivery(*, automation_id: int, incoming: Incoming) -> intake.Accepted:
    """The delivery a request makes, not yet stored: intake.store or intake.writer.store stores it."""
    return intake.Accepted(
        automation_id=automation_id,
        method=incoming.method,
        path=redact(incoming.path)[:2048],  # a key is a password: never stored in clear beside its digest
        # Text columns refuse NUL on PostgreSQL: one such row would fail the whole batch's INSERT.
        query_string=jsonsafe.clean_text(incoming.query_string),
        content_type=jsonsafe.clean_text(incoming.content_type[:255]),
        body=incoming.body,
        body_digest=hashlib.sha256(incoming.body).hexdigest(),
    )


def _original_run(delivery: Delivery) -> int | None:
    """The run that suppresses this delivery: same automation, byte-identical body, within the window.

    A run that completed within the window, or one that started within it
    and waits: its duplicate would otherwise wait beside it and act twice.
    """
    since = timezone.now() - timedelta(seconds=settings.HOOK_SUPPRESSION_SECONDS)
    return statements.original_run(delivery, completed=COMPLETED, waiting=Run.Status.WAITING, since=since)


def _claim(delivery_id: int, token: uuid.UUID) -> Delivery | None:
    """Take the delivery for this worker and return its row: pending and due, or running under a lapsed lease.

    One UPDATE ... RETURNING instead of an update and a read (a backlog
    drained about 20% faster: benchmarks/RESULTS.md, sixth session). Every
    claim is an attempt.
    """
    now = timezone.now()
    lease_until = now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS)
    changes = {"status": Delivery.Status.RUNNING, "claim": token, "lease_until": lease_until}
    return statements.claim(delivery_id, changes, now)


def run_time_limit() -> float:
    """Seconds a delivery's run may take: nine tenths of its lease.

    Past the lease the sweeper hands the delivery to another worker, and the
    steps of this run would happen a second time beside it; the last tenth
    leaves time to record the outcome while the claim still holds.
    """
    return settings.DELIVERY_LEASE_SECONDS * 0.9


# A delivery whose worker is lost mid-run runs again, but is claimed at most this many times more than
# its automation's max_attempts: one that kills every worker that takes it must end too.
LOST_WORKER_CLAIMS = 2


def process_delivery(*, delivery_id: int) -> None:
    """Run one delivery; safe to call twice, concurrently, or after its worker died: one run completes.

    Never raises for anything a delivery carries: a delivery that cannot be
    run for a fault of ours is retried as its automation's retries say, then
    failed with the reason (Delivery.error, and a failed run in Execution
    History), so that every accepted delivery ends. The delivery is done once
    its run has completed or waits: a waiting run is the run's business
    (automations/runs.py), never retried or re-queued from here.
    """
    claimed_at = time.monotonic()
    automation = Automation.objects.filter(enabled=True, deliveries__pk=delivery_id).first()
    if automation is None:
        return  # off (kept for replay) or deleted
    token = uuid.uuid4()
    # The claim commits on its own, before anything that could fail: its attempt counts even when
    # what follows rolls back, or the worker dies, so a delivery cannot fail the same way forever.
    delivery = _claim(delivery_id, token)
    if delivery is None:
        return
    if delivery_id <= automation.reset_after_delivery:
        # A retry of a delivery a worker was running when the automation was reset: discarded, as the reset
        # discarded the others (on_reset). Its earlier attempt's run stays in Execution History.
        Delivery.objects.filter(pk=delivery_id, claim=token).delete()
        return
    delivery.automation = automation
    if delivery.attempts > automation.retry_attempts + LOST_WORKER_CLAIMS:
        _abandon_previous(delivery)
        _end_without_run(delivery, token, f"its run did not finish in {delivery.attempts - 1} attempts")
        return
    try:
        with transaction.atomic():
            run = _start(delivery, automation, token)
    except Exception as error:  # noqa: BLE001 (whatever the bytes, the delivery must end)
        # A delete that went through first refuses the run's foreign key at commit (IntegrityError), or
        # PostgreSQL breaks a lock cycle with it by failing this transaction (a deadlock).
        if isinstance(error, DatabaseError) and not Automation.objects.filter(pk=automation.pk).exists():
            return  # deleted while this worker started its run: the delivery went with it
        logger.exception("delivery %s could not start its run", delivery.public_id)
        _end_without_run(delivery, token, f"its run could not be started ({error.__class__.__name__})")
        return
    if run is None:
        return  # suppressed
    engine.advance(run, deadline=claimed_at + run_time_limit(), past_deadline=PAST_TIME_LIMIT)
    _finish(delivery, token, run)


def _abandon_previous(delivery: Delivery) -> None:
    """The run a lost worker left behind is marked abandoned: it never finished and never will."""
    if delivery.run_id:
        runs.abandon(delivery.run_id, "its worker was lost; the delivery ran again")


def _start(delivery: Delivery, automation: Automation, token: uuid.UUID) -> Run | None:
    """Suppress the delivery (None), or commit its run, held by this claim, with the delivery's link to it."""
    _abandon_previous(delivery)
    if automation.suppress_duplicates and (original := _original_run(delivery)):
        Delivery.objects.filter(pk=delivery.pk).update(
            status=Delivery.Status.SUPPRESSED, suppressed_by_id=original, claim=None, lease_until=None
        )
        runs.count_suppressed(original)
        return None
    trigger = trigger_data(
        body=bytes(delivery.body),
        content_type=delivery.content_type,
        query_string=delivery.query_string,
        path=delivery.path,
    )
    run = runs.start(
        automation=automation, trigger=trigger, source=Run.Source.WEBHOOK, attempt=delivery.attempts, claim=token
    )
    Delivery.objects.filter(pk=delivery.pk).update(run=run)
    return run


def _end_without_run(delivery: Delivery, token: uuid.UUID, reason: str) -> None:
    """A delivery whose run could not start: retried later like a failed run, or failed, with the reason recorded.

    The reason also goes on a failed run, so that Execution History shows it;
    its trigger data is left empty, since building it may be what failed.
    """
    automation = delivery.automation
    if delivery.attempts < automation.retry_attempts:
        retry_in = _backoff(delivery)
        changes = {"status": Delivery.Status.PENDING, "not_before": timezone.now() + timedelta(seconds=retry_in)}
    else:
        retry_in, changes = None, {"status": Delivery.Status.FAILED}
    with transaction.atomic():
        if not Delivery.objects.filter(pk=delivery.pk, claim=token, status=Delivery.Status.RUNNING).update(
            claim=None, lease_until=None, error=reason, **changes
        ):
            return  # another worker took it over meanwhile
        run = runs.failed(automation=automation, source=Run.Source.WEBHOOK, attempt=delivery.attempts, reason=reason)
        Delivery.objects.filter(pk=delivery.pk).update(run=run)
        if retry_in is not None:
            _retry_later(delivery.pk, retry_in)


def _backoff(delivery: Delivery) -> int:
    """Seconds until the next attempt: the automation's backoff, doubled after each attempt."""
    return delivery.automation.retry_backoff * 2 ** (delivery.attempts - 1)


def _retry_later(delivery_id: int, seconds: int) -> None:
    transaction.on_commit(lambda: tasks.process_delivery.apply_async((delivery_id,), countdown=seconds), robust=True)


def _finish(delivery: Delivery, token: uuid.UUID, run: Run) -> None:
    """The gate of exactly-once completion: the run's outcome and the delivery's end commit together, or neither.

    Neither when this worker no longer holds both: another worker took the
    delivery over (its lease ran out) and abandoned this run.
    """
    automation = delivery.automation
    changes = {"claim": None, "lease_until": None}
    retry_in = None
    if run.status in SETTLED:
        changes.update(status=Delivery.Status.DONE, error="")
    elif delivery.attempts < automation.retry_attempts:
        retry_in = _backoff(delivery)
        changes.update(status=Delivery.Status.PENDING, not_before=timezone.now() + timedelta(seconds=retry_in))
        changes["error"] = run.error
    else:
        changes.update(status=Delivery.Status.FAILED, error=run.error)
    held = {"claim": token, "status": Delivery.Status.RUNNING}
    if runs.settle(run, token, gate=runs.Gate(Delivery, delivery.pk, held, changes)) and retry_in is not None:
        _retry_later(delivery.pk, retry_in)


def process_deliveries(*, delivery_ids: list[int]) -> None:
    """Run deliveries committed together, in order; one that raises does not keep the others from running."""
    for delivery_id in delivery_ids:
        _process_logged(delivery_id)


def _process_logged(delivery_id: int) -> None:
    """process_delivery, with what it raises (the database gone mid-run) logged; the sweeper queues it again."""
    try:
        process_delivery(delivery_id=delivery_id)
    except Exception:
        logger.exception("delivery %d could not be processed; the sweeper will queue it again", delivery_id)


def replay_kept(*, automation_id: int) -> int:
    """Run an automation's due pending deliveries one at a time, oldest first; returns how many were taken.

    One replay per automation at a time (a cache lock), so deliveries kept
    while it was off run in the order they arrived.
    """
    lock = f"hooks:replay:{automation_id}"
    if not cache.add(lock, 1, settings.DELIVERY_LEASE_SECONDS):
        return 0
    taken, last = 0, 0
    try:
        while True:
            now = timezone.now()
            next_id = (
                Delivery.objects.filter(
                    automation_id=automation_id, automation__enabled=True, status=Delivery.Status.PENDING, pk__gt=last
                )
                .filter(Q(not_before__isnull=True) | Q(not_before__lte=now))
                .order_by("pk")
                .values_list("pk", flat=True)
                .first()
            )
            if next_id is None:
                return taken
            _process_logged(next_id)
            taken, last = taken + 1, next_id
    finally:
        cache.delete(lock)


def sweep() -> int:
    """Queue what no task holds (DESIGN.md contract 1): stale pending deliveries and those whose worker was lost."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.DELIVERY_SWEEP_SECONDS)
    automations = set(
        Delivery.objects.filter(status=Delivery.Status.PENDING, received_at__lt=stale, automation__enabled=True)
        .filter(Q(not_before__isnull=True) | Q(not_before__lte=now))
        .values_list("automation_id", flat=True)
        .distinct()
    )
    lost = list(
        Delivery.objects.filter(status=Delivery.Status.RUNNING, lease_until__lt=now).values_list("pk", flat=True)[:1000]
    )
    for automation_id in automations:
        tasks.replay_kept.delay(automation_id)
    for delivery_id in lost:
        tasks.process_delivery.delay(delivery_id)
    if automations or lost:
        logger.info("sweeper queued %d automations' pending deliveries and %d lost ones", len(automations), len(lost))
    return len(automations) + len(lost)


def on_turned_on(automation: Automation) -> None:
    tasks.replay_kept.delay(automation.pk)


def on_reset(automation: Automation) -> None:
    """Reset discards unprocessed deliveries, pending automatic retries included.

    A delivery a worker is running meanwhile finishes its attempt, and its
    retry is discarded when it comes due: the reset remembers the last
    delivery received before it, by id, since received_at is the database's
    clock and a reset's moment the web process's.
    """
    deliveries = Delivery.objects.filter(automation=automation)
    last = deliveries.aggregate(last=Max("pk"))["last"] or 0
    Automation.objects.filter(pk=automation.pk).update(reset_after_delivery=last)
    deliveries.filter(status=Delivery.Status.PENDING).delete()
