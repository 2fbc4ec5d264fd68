"""What becomes of an accepted delivery: a worker turns it into its run in one transaction, then goes on with the run.

DESIGN.md contracts 1 and 5; docs/webhooks.md, "What happens to a delivery".
A delivery is never claimed or leased: turning it into its run is one
transaction, which a lost worker rolls back, and the sweeper queues a
delivery still pending. From its run on, only the run is claimed, leased,
retried and swept (automations/runs.py), as every other run is.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, OperationalError, transaction
from django.utils import timezone

from automations import runs
from automations.models import Automation, Run
from hooks import statements, tasks
from hooks.models import Delivery
from hooks.trigger import trigger_data

logger = logging.getLogger(__name__)

COMPLETED = (Run.Status.SUCCEEDED, Run.Status.STOPPED)  # a run stopped by a condition also completed


def process_delivery(*, delivery_id: int) -> None:
    """Turn the delivery into its run, then go on with the run in this worker; safe to call twice, concurrently,
    or after a worker died: the delivery becomes its run once, and the run completes once (runs.resume).

    A worker lost between the two leaves the run queued: the sweeper finds it due.
    """
    for run in start_runs(delivery_id=delivery_id):
        runs.resume(run.pk, queued=run)


def start_runs(*, delivery_id: int) -> list[Run]:
    """In one transaction: the delivery suppressed (a duplicate), or its run queued and the delivery done.

    Returns the runs it became, for the caller to go on with;
    none when the automation is off (the delivery is kept for replay) or
    deleted, when another worker took the delivery first, or when it was
    suppressed. Never raises for anything a delivery carries: one whose run
    cannot be started is failed with the reason, so that it ends (but for a
    passing fault of the database, after which the sweeper tries again). Shaped for
    a delivery that feeds several automations: each gets its run, in the
    same transaction.
    """
    automation = Automation.objects.filter(enabled=True, deliveries__pk=delivery_id).first()
    if automation is None:
        return []
    try:
        with transaction.atomic():
            return _start_runs(delivery_id, [automation])
    except Exception as error:  # noqa: BLE001 (whatever the bytes, the delivery must end)
        # A delete that went through first refuses the run's foreign key at commit (IntegrityError), or
        # PostgreSQL breaks a lock cycle with it by failing this transaction (a deadlock).
        if isinstance(error, DatabaseError) and not Automation.objects.filter(pk=automation.pk).exists():
            return []  # deleted meanwhile: the delivery went with it
        if isinstance(error, OperationalError):
            # A passing fault of the database (a lock timeout, a lost connection): the delivery stays pending, and
            # the sweeper queues it again. Anything else would fail the same way again: it ends now.
            logger.warning("delivery %d could not start its run; the sweeper will queue it again", delivery_id)
            return []
        logger.exception("delivery %d could not start its run", delivery_id)
        _fail(delivery_id, automation, f"its run could not be started ({error.__class__.__name__})")
        return []


def _start_runs(delivery_id: int, automations: list[Automation]) -> list[Run]:
    # The row's lock makes a second worker wait here, then find the delivery no longer pending.
    delivery = Delivery.objects.select_for_update().filter(pk=delivery_id, status=Delivery.Status.PENDING).first()
    if delivery is None:
        return []
    trigger = None
    queued = []
    for automation in automations:
        if automation.suppress_duplicates and (original := _original_run(delivery)):
            Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.SUPPRESSED, suppressed_by=original)
            runs.count_suppressed(original)
            continue
        trigger = trigger or trigger_data(
            body=bytes(delivery.body),
            content_type=delivery.content_type,
            query_string=delivery.query_string,
            path=delivery.path,
        )
        # Not dispatched: this worker goes on with it once the transaction commits (process_delivery).
        queued.append(runs.queue(automation=automation, trigger=trigger, source=Run.Source.WEBHOOK, dispatch=False))
    if queued:
        Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.DONE, run=queued[0])
    return queued


def _original_run(delivery: Delivery) -> int | None:
    """The run that suppresses this delivery: same automation, byte-identical body, within the window.

    A run that completed within the window, or one that started within it
    and waits: its duplicate would otherwise wait beside it and act twice.
    """
    since = timezone.now() - timedelta(seconds=settings.HOOK_SUPPRESSION_SECONDS)
    return statements.original_run(delivery, completed=COMPLETED, waiting=Run.Status.WAITING, since=since)


def _fail(delivery_id: int, automation: Automation, reason: str) -> None:
    """A delivery whose run could not be started ends failed, with the reason on it and on a failed run, so that
    Execution History shows it (its trigger data left empty: building it may be what failed). With the database
    gone this raises, and the delivery stays pending for the sweeper."""
    with transaction.atomic():
        run = runs.failed(automation=automation, source=Run.Source.WEBHOOK, attempt=1, reason=reason)
        Delivery.objects.filter(pk=delivery_id, status=Delivery.Status.PENDING).update(
            status=Delivery.Status.FAILED, error=reason, run=run
        )


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
    """Run an automation's pending deliveries one at a time, oldest first; returns how many were taken.

    One replay per automation at a time (a cache lock), so deliveries kept
    while it was off run in the order they arrived.
    """
    lock = f"hooks:replay:{automation_id}"
    if not cache.add(lock, 1, runs.lease_seconds()):
        return 0
    taken, last = 0, 0
    try:
        while True:
            next_id = (
                Delivery.objects.filter(
                    automation_id=automation_id, automation__enabled=True, status=Delivery.Status.PENDING, pk__gt=last
                )
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


def queue_pending(**_) -> int:
    """Queue the deliveries no task holds (DESIGN.md contract 1): pending, of an automation that is on, received
    more than DELIVERY_SWEEP_SECONDS ago (their message lost with a broker, or their worker lost mid-transaction).

    Called by the one sweeper (automations.signals.sweep). Returns how many
    automations' replays it queued.
    """
    stale = timezone.now() - timedelta(seconds=settings.DELIVERY_SWEEP_SECONDS)
    automations = set(
        Delivery.objects.filter(status=Delivery.Status.PENDING, received_at__lt=stale, automation__enabled=True)
        .values_list("automation_id", flat=True)
        .distinct()
    )
    for automation_id in automations:
        tasks.replay_kept.delay(automation_id)
    if automations:
        logger.info("sweeper queued %d automations' pending deliveries", len(automations))
    return len(automations)


def on_turned_on(automation: Automation) -> None:
    tasks.replay_kept.delay(automation.pk)


def on_reset(automation: Automation) -> None:
    """Reset discards the deliveries not yet turned into runs; their queued runs and pending retries the reset
    ended itself (automations.services.reset)."""
    Delivery.objects.filter(automation=automation, status=Delivery.Status.PENDING).delete()
