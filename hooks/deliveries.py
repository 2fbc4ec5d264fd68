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
from django.db.models import Q
from django.db.models.functions import Length
from django.utils import timezone

from automations import requested_path, runs
from automations.models import Automation, Run
from catalog.models import Operation
from connections import routing
from connections.models import Connection
from edge.outages import task_outage
from hooks import selectors, statements, tasks
from hooks.models import Delivery
from hooks.trigger import trigger_data
from publickeys import selectors as key_selectors
from publickeys.models import PublicKey
from publickeys.redaction import PLACEHOLDER

logger = logging.getLogger(__name__)

COMPLETED = (Run.Status.SUCCEEDED, Run.Status.STOPPED)
# Deliveries to fan out that one sweep queues at most, in messages of FAN_OUT_CHUNK (the next sweep takes the rest).
FAN_OUT_SWEEP, FAN_OUT_CHUNK = 5000, 50  # a run stopped by a condition also completed


def process_delivery(*, delivery_id: int) -> None:
    """Turn the delivery into its run, then go on with the run in this worker; safe to call twice, concurrently,
    or after a worker died: the delivery becomes its run once, and the run completes once (runs.resume).

    A worker lost between the two leaves the run queued: the sweeper finds it due.
    """
    for run in start_runs(delivery_id=delivery_id):
        runs.resume(run.pk, queued=run)


# A delivery whose body is larger than this becomes its run alone: a batch holds every body it turns in memory at
# once, and a worker takes up to hooks.tasks.TAKEN (50) deliveries of up to HOOK_MAX_BODY_BYTES each.
BATCHED_BODY_BYTES = 64 * 1024


def process_deliveries(*, delivery_ids: list[int]) -> None:
    """Run deliveries committed together, in order; one that raises does not keep the others from running.

    Those with small bodies become their runs together, in one transaction
    (a worker drains a backlog faster than one by one: benchmarks/RESULTS.md,
    worker drain, 2026-11-27); if that fails, each becomes its run alone, so
    that only a faulty one fails. The worker then goes on with each run in
    turn. A duplicate of a delivery before it in the message (a sender's
    quick retry) waits until that one's run has gone on, then is taken
    alone: suppressed if that run succeeded, as one by one it would be.
    """
    rows = Delivery.objects.filter(pk__in=delivery_ids).values_list(
        "pk", Length("body"), "automation", "connection", "app", "body_digest"
    )
    found = {
        pk: (size, (automation_id, connection_id, app_id, digest))
        for pk, size, automation_id, connection_id, app_id, digest in rows
    }
    together: list[int] = []
    seen, after = set(), []
    for delivery_id in delivery_ids:
        size, body = found.get(delivery_id, (0, None))
        if body in seen:
            after.append(delivery_id)
            continue
        seen.add(body)
        if (size or 0) <= BATCHED_BODY_BYTES:
            together.append(delivery_id)
            continue
        _process_together(together)
        together = []
        _process_logged(delivery_id)
    _process_together(together)
    for delivery_id in after:
        _process_logged(delivery_id)


def _process_together(delivery_ids: list[int]) -> None:
    if not delivery_ids:
        return
    try:
        with transaction.atomic():
            queued = _start_runs(_locked(delivery_ids))
    except Exception:  # noqa: BLE001 (one delivery's fault: each is taken alone, and it alone fails)
        logger.info("deliveries %s could not become their runs together; each goes alone", delivery_ids)
        for delivery_id in delivery_ids:
            _process_logged(delivery_id)
        return
    for run in queued:
        try:
            runs.resume(run.pk, queued=run)
        except Exception as error:
            _left_for_the_sweeper(error, "run %d could not go on; the sweeper will queue it again", run.pk)


def start_runs(*, delivery_id: int) -> list[Run]:
    """In one transaction: the delivery suppressed (a duplicate), or its run queued and the delivery done.

    Returns the runs it became, for the caller to go on with; none when the
    automation is off (the delivery is kept for replay) or deleted, when
    another worker took the delivery first, or when it was suppressed. Never
    raises for anything a delivery carries: one whose run cannot be started
    is failed with the reason, so that it ends (but for a passing fault of
    the database, after which the sweeper tries again).
    """
    automation = Automation.objects.filter(enabled=True, deliveries__pk=delivery_id).first()
    if automation is None:
        if Delivery.objects.filter(pk=delivery_id, automation__isnull=True, status=Delivery.Status.PENDING).exists():
            return _start_fan_out(delivery_id)
        return []
    try:
        with transaction.atomic():
            return _start_runs(_locked([delivery_id]))
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


def _start_fan_out(delivery_id: int) -> list[Run]:
    """start_runs for a connection's or an app's delivery: fanned out in one transaction, or ended failed with the
    reason (no run: it belongs to no automation) when what it carries makes that impossible."""
    try:
        with transaction.atomic():
            return _start_runs(_locked([delivery_id]))
    except OperationalError:
        logger.warning("delivery %d could not be fanned out; the sweeper will queue it again", delivery_id)
        return []
    except Exception as error:  # noqa: BLE001 (whatever the bytes, the delivery must end)
        if isinstance(error, DatabaseError) and not Delivery.objects.filter(pk=delivery_id).exists():
            return []  # its connection or app was deleted meanwhile, and the delivery with it
        logger.exception("delivery %d could not be fanned out", delivery_id)
        Delivery.objects.filter(pk=delivery_id, status=Delivery.Status.PENDING).update(
            status=Delivery.Status.FAILED, error=f"it could not be fanned out ({error.__class__.__name__})"
        )
        return []


def _locked(delivery_ids: list[int]) -> list[Delivery]:
    """The pending deliveries among these of an automation that is on, or of a connection or an app (to fan out),
    oldest first, each row locked until the transaction ends: a second worker waits, then finds them no longer
    pending."""
    return list(
        Delivery.objects.select_for_update(of=("self",))
        .select_related("automation")
        .filter(pk__in=delivery_ids, status=Delivery.Status.PENDING)
        .filter(Q(automation__enabled=True) | Q(automation__isnull=True))
        .order_by("pk")
    )


def _start_runs(locked: list[Delivery]) -> list[Run]:
    """Each delivery suppressed, or a run queued for each automation it feeds and the delivery done, in the
    caller's transaction. The runs are not dispatched: the worker goes on with them once it commits.

    A connection's or an app's delivery feeds the automations listening on
    its connection (fan_out): it is done, and each automation gets a copy of
    its own, which goes on here as an automation's delivery does when that
    automation is on, and is kept for replay when it is off.
    """
    expanded = []
    for delivery in locked:
        expanded += fan_out(delivery) if delivery.automation_id is None else [delivery]
    wanted, made = [], []
    for delivery in expanded:
        trigger = getattr(delivery, "fanned_trigger", None)
        for automation in [delivery.automation]:
            if automation.suppress_duplicates and (original := _original_run(delivery)):
                Delivery.objects.filter(pk=delivery.pk).update(
                    status=Delivery.Status.SUPPRESSED, suppressed_by=original
                )
                runs.count_suppressed(original)
                continue
            trigger = trigger or trigger_data(
                body=bytes(delivery.body),
                content_type=delivery.content_type,
                query_string=delivery.query_string,
                path=delivery.path,
            )
            wanted.append(
                runs.Queued(
                    automation=automation,
                    trigger=trigger,
                    source=Run.Source.WEBHOOK,
                    trigger_key_id=_trigger_key_id(delivery, automation),
                )
            )
            made.append(delivery)
    queued = runs.queue_all(wanted, dispatch=False)
    firsts = {}
    for delivery, run in zip(made, queued, strict=True):
        firsts.setdefault(delivery.pk, (delivery, run))
    for delivery, run in firsts.values():
        delivery.status, delivery.run = Delivery.Status.DONE, run
    if firsts:
        Delivery.objects.bulk_update([delivery for delivery, _ in firsts.values()], ["status", "run"])
    return queued


def _trigger_key_id(delivery: Delivery, automation: Automation) -> int | None:
    """The webhook key the delivery's URL carried, when a step will send trigger.path out and it is certain: a
    process accepts a key for HOOK_KEY_MEMORY_SECONDS after it was retired (automations/requested_path.py)."""
    if delivery.connection_id is not None or delivery.app_id is not None:
        return None  # a copy fanned out: its URL's key was a connection's or an app's, which no step sends out
    if PLACEHOLDER not in delivery.path or not requested_path.wanted(automation.definition):
        return None
    return key_selectors.key_id_live_at(
        purpose=PublicKey.Purpose.WEBHOOK,
        target=automation,
        at=delivery.received_at,
        remembered_seconds=selectors.HOOK_KEY_MEMORY_SECONDS,
    )


def _original_run(delivery: Delivery) -> int | None:
    """The run that suppresses this delivery: same automation, byte-identical body, within the window.

    A run that completed within the window, or one that started within it
    and waits: its duplicate would otherwise wait beside it and act twice.
    Not a run queued and not yet started, which may still fail.
    """
    since = timezone.now() - timedelta(seconds=settings.HOOK_SUPPRESSION_SECONDS)
    return statements.original_run(
        delivery, completed=COMPLETED, waiting=Run.Status.WAITING, since=since, queued=runs.START
    )


def fan_out(delivery: Delivery) -> list[Delivery]:
    """A connection's or an app's delivery (locked, pending) turned into one copy per automation listening on its
    connection(s), in the caller's transaction; returns the copies whose automation is on, to start now.

    The delivery ends done, or unmatched with the reason when no connection
    or no automation takes it. A copy is an automation's delivery like any
    other: its duplicate suppression reads the automation's own deliveries,
    and a copy of an automation that is off stays pending until turned on
    (replay_kept), or until reset discards it. A worker lost here rolls it
    all back: the delivery is still pending, and the sweeper queues it again.
    """
    trigger = trigger_data(
        body=bytes(delivery.body),
        content_type=delivery.content_type,
        query_string=delivery.query_string,
        path=delivery.path,
    )
    if delivery.connection_id is not None:
        connections, mode = [delivery.connection], Operation.DeliveryMode.PER_CONNECTION
    else:
        connections, reason = _routed(delivery, trigger)
        if not connections:
            return _unmatched(delivery, reason)
        mode = Operation.DeliveryMode.SHARED_ENDPOINT
    listening = [(connection, automation) for connection in connections for automation in _listening(connection, mode)]
    if not listening:
        names = ", ".join(str(connection.pk) for connection in connections)
        return _unmatched(delivery, f"no automation listens with a {mode} trigger on connection {names}")
    copies = [
        Delivery(
            automation=automation,
            connection=connection,
            app_id=delivery.app_id,
            account=delivery.account,
            method=delivery.method,
            path=delivery.path,
            query_string=delivery.query_string,
            content_type=delivery.content_type,
            body=delivery.body,
            body_digest=delivery.body_digest,
        )
        for connection, automation in listening
    ]
    Delivery.objects.bulk_create(copies)
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.DONE)
    for copy in copies:
        copy.fanned_trigger = trigger
    return [copy for copy in copies if copy.automation.enabled]


def _listening(connection, mode: str) -> list[Automation]:
    """The connection owner's automations (on or off) with an app_trigger on it whose operation has this mode."""
    candidates = list(
        Automation.objects.filter(
            owner_id=connection.owner_id,
            definition__trigger__type="app_trigger",
            definition__trigger__connection=connection.pk,
        ).order_by("pk")
    )
    if not candidates:
        return []
    keys = {automation.definition["trigger"].get("trigger") for automation in candidates}
    slug = connection.app.slug
    modes = dict(
        Operation.objects.filter(app_id=connection.app_id, kind=Operation.Kind.TRIGGER, key__in=keys).values_list(
            "key", "delivery_mode"
        )
    )
    return [
        automation
        for automation in candidates
        if automation.definition["trigger"].get("app") == slug
        and modes.get(automation.definition["trigger"].get("trigger")) == mode
    ]


def _routed(delivery: Delivery, trigger: dict) -> tuple[list, str]:
    """The connections of its app whose account the delivery names by the app's routing rule (several when
    several owners connected that account), or none and why."""
    app = delivery.app
    rule = routing.rule_of(app.auth_config)
    if "header" in rule:
        account = delivery.account or None
        where = f"the {rule['header']} header"
    elif "body_path" in rule:
        account = routing.account_at(trigger.get("body"), rule["body_path"])
        where = f"the body at {rule['body_path']}"
    else:
        return [], f"{app.slug} has no routing rule (auth_config routing.body_path or routing.header)"
    if account is None:
        return [], f"{where} names no account"
    connections = list(Connection.objects.select_related("app").filter(app=app, account_id=account).order_by("pk"))
    if not connections:
        return [], f"no connection of {app.slug} is to the account {account[:100]!r} that {where} names"
    return connections, ""


def _unmatched(delivery: Delivery, reason: str) -> list[Delivery]:
    """Recorded, not dropped: staff see it in admin with its reason (docs/connections.md)."""
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.UNMATCHED, error=reason)
    logger.info("delivery %d is unmatched: %s", delivery.pk, reason)
    return []


def _fail(delivery_id: int, automation: Automation, reason: str) -> None:
    """A delivery whose run could not be started ends failed, with the reason on it and on a failed run, so that
    Execution History shows it (its trigger data left empty: building it may be what failed). With the database
    gone this raises, and the delivery stays pending for the sweeper."""
    with transaction.atomic():
        run = runs.failed(automation=automation, source=Run.Source.WEBHOOK, attempt=1, reason=reason)
        Delivery.objects.filter(pk=delivery_id, status=Delivery.Status.PENDING).update(
            status=Delivery.Status.FAILED, error=reason, run=run
        )


def _process_logged(delivery_id: int) -> None:
    """process_delivery, with what it raises (the database gone mid-run) logged; the sweeper queues it again."""
    try:
        process_delivery(delivery_id=delivery_id)
    except Exception as error:
        _left_for_the_sweeper(error, "delivery %d could not be processed; the sweeper will queue it again", delivery_id)


def _left_for_the_sweeper(error: Exception, message: str, *args) -> None:
    """Log what the sweeper will take up again: the database out of reach once per outage (edge/outages.py), as
    the worker's tasks do, not a traceback for each run of a backlog; any other error with its traceback."""
    if task_outage.is_outage(error):
        task_outage.refused_one(error)
    else:
        logger.exception(message, *args)


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
    # Connections' and apps' deliveries not yet fanned out: queued again as the intake queues them.
    to_fan_out = list(
        Delivery.objects.filter(status=Delivery.Status.PENDING, received_at__lt=stale, automation__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)[:FAN_OUT_SWEEP]
    )
    for start in range(0, len(to_fan_out), FAN_OUT_CHUNK):
        tasks.process_deliveries.delay(to_fan_out[start : start + FAN_OUT_CHUNK])
    if to_fan_out:
        logger.info("sweeper queued %d deliveries to fan out", len(to_fan_out))
    return len(automations) + len(to_fan_out)


def on_turned_on(*, automation: Automation, **_) -> None:
    tasks.replay_kept.delay(automation.pk)


def on_reset(*, automation: Automation, **_) -> None:
    """Reset discards the deliveries not yet turned into runs; their queued runs and pending retries the reset
    ended itself (automations.services.reset)."""
    Delivery.objects.filter(automation=automation, status=Delivery.Status.PENDING).delete()
