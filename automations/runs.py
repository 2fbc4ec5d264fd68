"""A run's states and every move between them (DESIGN.md contract 5).

    start ──▶ running ──▶ succeeded | stopped | failed
                │  ▲
          wait  ▼  │  resume (beat when its time comes, or an answer)
              waiting
    running, its worker lost ──▶ abandoned (or, after a resume, waiting again)

Each move is one conditional UPDATE that happens only from the state it
leaves and, for a running run, only for the worker holding it (its claim):
two workers, two answers, or a worker and the sweeper never both move a run.
Other apps move runs only through these functions.
"""

import dataclasses
import functools
import logging
import time
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import F, Q
from django.utils import timezone

from automations import engine
from automations.models import Automation, Run
from automations.steps import PAST_TIME_LIMIT

logger = logging.getLogger(__name__)

# A resumed run whose worker is lost goes back to waiting this many times, then is abandoned:
# a run that kills every worker that takes it must end too.
LOST_WORKER_LIMIT = 2
SWEEP_BATCH = 500
# What settling writes on a run: the outcome advance() set, and the end of its worker's hold.
SETTLED_FIELDS = (*engine.OUTCOME_FIELDS, "claim", "lease_until")


@dataclasses.dataclass(frozen=True)
class Gate:
    """The caller's row a run settles with: it must still hold the values in held, and takes changes.

    held compares as a filter does (None matches NULL).
    """

    model: type[models.Model]
    pk: int
    held: dict
    changes: dict


def start(
    *, automation: Automation, trigger: dict, source: str, attempt: int = 1, claim: uuid.UUID | None = None
) -> Run:
    """A running run with a copy of the automation's definition, committed before any step runs.

    claim: the token of the worker that holds it (a delivery's claim); only
    that worker can settle it.
    """
    return Run.objects.create(
        automation=automation,
        definition=automation.definition,
        trigger=trigger,
        source=source,
        attempt=attempt,
        claim=claim,
    )


def queue(*, automation: Automation, trigger: dict, source: str) -> Run:
    """A run to start in a worker, not in the caller: a person's submission (a hosted form) never waits for steps.

    It is committed as waiting, due now, with no step done: the task queued
    on commit takes it through resume(), and the sweeper queues it again if
    that task is lost, so a run accepted here is never lost. Its steps run
    once, as a resumed run's do (a worker lost meanwhile gives it back).
    """
    from automations import tasks

    run = Run.objects.create(
        automation=automation,
        definition=automation.definition,
        trigger=trigger,
        source=source,
        status=Run.Status.WAITING,
        waiting_for={"kind": "start", "step": ""},
        resume_at=timezone.now(),
    )
    transaction.on_commit(lambda: tasks.resume_run.delay(run.pk), robust=True)
    return run


def failed(*, automation: Automation, source: str, attempt: int, reason: str) -> Run:
    """A run that failed before its first step (its trigger event could not be run), for Execution History to show."""
    return Run.objects.create(
        automation=automation,
        definition=automation.definition,
        source=source,
        attempt=attempt,
        status=Run.Status.FAILED,
        error=reason,
        finished_at=timezone.now(),
    )


def settle(run: Run, claim: uuid.UUID | None, *, gate: Gate | None = None) -> bool:
    """Save the outcome advance() set on the run (succeeded, stopped, failed or waiting) if claim still holds it.

    False when it does not: the run was abandoned, taken over or deleted
    meanwhile, and the outcome is dropped. gate: the caller's own row, which
    must take its changes for the run to settle (a delivery's end, still
    held by its worker); it is written first, the order a delete takes them
    in. On PostgreSQL that is one statement, one round trip where a
    transaction of two takes four (the drain, benchmarks/RESULTS.md, tenth
    session). That statement writes the gate's row even when the run is no
    longer held, which never happens to a delivery's run while its delivery
    is still held (only a worker that took the delivery over abandons it);
    elsewhere one transaction commits both or neither. A run that waits for
    a time is queued to resume then, and the sweeper resumes it if that
    task is lost.
    """
    values = {name: getattr(run, name) for name in engine.OUTCOME_FIELDS} | {"claim": None, "lease_until": None}
    if gate is not None and connection.vendor == "postgresql":
        params = [
            *_db_values(gate.model, gate.changes),
            gate.pk,
            *_db_values(gate.model, gate.held),
            *_db_values(Run, values),
            run.pk,
            Run.Status.RUNNING,
            Run._meta.get_field("claim").get_db_prep_save(claim, connection),
        ]
        with connection.cursor() as cursor:
            cursor.execute(gated_settle_sql(gate.model, tuple(gate.held), tuple(gate.changes)), params)
            settled = cursor.fetchone() is not None
    elif gate is None:
        settled = bool(Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, claim=claim).update(**values))
    else:
        with transaction.atomic():
            gate_row = gate.model._default_manager.filter(pk=gate.pk, **gate.held)
            settled = bool(gate_row.update(**gate.changes)) and bool(
                Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, claim=claim).update(**values)
            )
            if not settled:
                transaction.set_rollback(True)
    if settled and run.status == Run.Status.WAITING and run.resume_at is not None:
        _resume_at(run.pk, run.resume_at)
    return settled


@functools.cache
def gated_settle_sql(gate_model: type[models.Model], held: tuple[str, ...], changes: tuple[str, ...]) -> str:
    """The gate's UPDATE as a data-modifying WITH, and the run's UPDATE that happens only if the gate's row did.

    Built once per shape of gate: compiled by the ORM from two querysets for
    every delivery, it cost a worker eight times the CPU of its parameters
    (benchmarks/RESULTS.md, eleventh session). Parameters: the gate's
    changes, its pk and held values, then SETTLED_FIELDS' values, the run's
    pk, RUNNING and the claim.
    """
    quote = connection.ops.quote_name

    def column(model, name: str) -> str:
        return quote(model._meta.get_field(name).column)

    gate_sets = ", ".join(f"{column(gate_model, name)} = %s" for name in changes)
    gate_held = "".join(f" AND {column(gate_model, name)} IS NOT DISTINCT FROM %s" for name in held)
    run_sets = ", ".join(f"{column(Run, name)} = %s" for name in SETTLED_FIELDS)
    return (
        f"WITH gate AS (UPDATE {quote(gate_model._meta.db_table)} SET {gate_sets} "
        f"WHERE {quote(gate_model._meta.pk.column)} = %s{gate_held} RETURNING 1) "
        f"UPDATE {quote(Run._meta.db_table)} SET {run_sets} WHERE {column(Run, 'id')} = %s "
        f"AND {column(Run, 'status')} = %s AND {column(Run, 'claim')} IS NOT DISTINCT FROM %s "
        "AND EXISTS (SELECT FROM gate) RETURNING 1"
    )


def _db_values(model, values: dict) -> list:
    """The values as the ORM sends them for these fields (a UUID as hex on SQLite, JSON adapted, say)."""
    return [model._meta.get_field(name).get_db_prep_save(value, connection) for name, value in values.items()]


def fail(run: Run, claim: uuid.UUID | None, reason: str) -> bool:
    """A running run that ended for a fault of ours, not of its steps (the database gone mid-run, a bug)."""
    return bool(
        Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, claim=claim).update(
            status=Run.Status.FAILED, error=reason, finished_at=timezone.now(), claim=None, lease_until=None
        )
    )


def abandon(run_id: int, reason: str) -> bool:
    """A running run whose worker was lost: it never finished and never will (its trigger event may run again)."""
    return bool(
        Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(
            status=Run.Status.ABANDONED, error=reason, finished_at=timezone.now(), claim=None, lease_until=None
        )
    )


ENDED_WHILE_WAITING = "ended while it waited"


def end_waiting(*, reason: str, **which) -> int:
    """End the waiting runs filtered by which (automation_id= on Processing > Reset and deletion; the items they
    wait for when their approval queue is deleted): failed, their error saying why.

    They fail rather than taking a state of their own because, to whoever
    reads Execution History, they did not complete and never will; the
    error (`ended while it waited: <reason>`) says it was not their steps'
    fault. One conditional update from waiting: a run an answer or its time
    resumed first goes on and is not ended, and one ended first can no
    longer be resumed or answered, so the links that asked for it (a form,
    an approval item) no longer take an answer. Returns how many it ended.
    """
    return Run.objects.filter(**which, status=Run.Status.WAITING).update(
        status=Run.Status.FAILED,
        error=f"{ENDED_WHILE_WAITING}: {reason}",
        finished_at=timezone.now(),
        resume_at=None,
        answer=None,
    )


def ended_while_waiting(run: Run) -> bool:
    """Whether end_waiting ended the run (its automation reset or deleted), rather than its steps or its time."""
    return run.status == Run.Status.FAILED and run.error.startswith(f"{ENDED_WHILE_WAITING}: ")


def count_suppressed(run_id: int) -> None:
    """One more duplicate delivery was suppressed because this run completed."""
    Run.objects.filter(pk=run_id).update(suppressed_count=F("suppressed_count") + 1)


def resume(run_id: int, *, answer=None, early: bool = False) -> bool:
    """Go on with a waiting run in this worker, once: of two racing resumes one takes it, the other gets False.

    A run waiting for a time is taken only once its time has come, unless
    early (an answer that needs no time). The resumed run holds a lease:
    past it, the sweeper gives the run back to waiting for another worker.
    """
    claim, now = uuid.uuid4(), timezone.now()
    due = Run.objects.filter(pk=run_id, status=Run.Status.WAITING)
    if not early:
        due = due.filter(resume_at__lte=now)
    if not due.update(
        status=Run.Status.RUNNING, claim=claim, lease_until=now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS)
    ):
        return False
    run = Run.objects.select_related("automation").get(pk=run_id)
    if run.answer is not None:  # a person's answer, recorded by answer()
        answer = run.answer
    limit = settings.DELIVERY_LEASE_SECONDS * 0.9  # the last tenth leaves time to settle while the lease holds
    try:
        engine.advance(run, answer=answer, deadline=time.monotonic() + limit, past_deadline=PAST_TIME_LIMIT)
    except Exception:
        logger.exception("run %s could not go on after its wait", run_id)
        fail(run, claim, "internal error while going on after a wait")
        return True
    settle(run, claim)
    return True


def answer(run_id: int, *, step: str, answer: dict) -> bool:
    """Record a person's answer to the run's wait at step, once, and queue the run to go on with it.

    Of two racing answers (two tabs, a double click, two approvers) the first
    wins and the other gets False, which its page shows as already answered.
    The answer is kept on the run, not in the task, so a lost task or worker
    loses nothing: the sweeper finds the run due (resume_at is now) and the
    worker that takes it reads the answer there. An answer for an earlier
    wait of the same run (an old link) finds another step and is refused.
    Call it inside the transaction that marks the person's link used, so
    that both commit or neither does.
    """
    from automations import tasks

    if answer is None:
        raise ValueError("an answer cannot be None: None is how a wait's time running out resumes a step")
    now = timezone.now()
    # A person's wait resumes at its expiry (resume_at): an answer that comes after it is refused even before
    # the sweeper has come by, and the step's on_expiry holds.
    recorded = (
        Run.objects.filter(pk=run_id, status=Run.Status.WAITING, waiting_for__step=step, answer__isnull=True)
        .filter(Q(resume_at__isnull=True) | Q(resume_at__gt=now))
        .update(answer=answer, resume_at=now)
    )
    if recorded:
        transaction.on_commit(lambda: tasks.resume_run.delay(run_id), robust=True)
    return bool(recorded)


def sweep() -> int:
    """Resume waiting runs whose time has come, and give back to waiting the resumed runs whose worker was lost.

    Beat calls this every RUN_SWEEP_SECONDS: the task queued when a run began
    to wait may have been lost with a broker or a worker. Returns how many
    runs it queued or moved.
    """
    from automations import tasks

    now = timezone.now()
    # Those due before the next sweep are queued for their time (eta), so a delay ends on time.
    soon = now + timedelta(seconds=settings.RUN_SWEEP_SECONDS)
    due = list(
        Run.objects.filter(status=Run.Status.WAITING, resume_at__lte=soon)
        .order_by("resume_at")
        .values_list("pk", "resume_at")[:SWEEP_BATCH]
    )
    for run_id, when in due:
        tasks.resume_run.apply_async((run_id,), eta=max(when, now))
    lost = Run.objects.filter(status=Run.Status.RUNNING, lease_until__lt=now)
    abandoned = lost.filter(lost_workers__gte=LOST_WORKER_LIMIT).update(
        status=Run.Status.ABANDONED,
        error="its worker was lost each time it went on after a wait",
        finished_at=now,
        claim=None,
        lease_until=None,
    )
    # Its steps are saved only when it settles, so it waits again at the step it waited at.
    requeued = lost.update(
        status=Run.Status.WAITING, resume_at=now, claim=None, lease_until=None, lost_workers=F("lost_workers") + 1
    )
    if due or abandoned or requeued:
        logger.info("run sweeper: %d due, %d given back to waiting, %d abandoned", len(due), requeued, abandoned)
    return len(due) + abandoned + requeued


def _resume_at(run_id: int, when) -> None:
    """Queue the resume for its time when that comes before the next sweep; the sweeper queues later ones.

    A worker holds a task with an eta in memory until then, and the Redis
    broker hands it out again after its visibility timeout: long waits are
    better kept in the database.
    """
    from automations import tasks

    if when > timezone.now() + timedelta(seconds=settings.RUN_SWEEP_SECONDS):
        return
    transaction.on_commit(lambda: tasks.resume_run.apply_async((run_id,), eta=when), robust=True)
