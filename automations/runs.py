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
import logging
import time
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from automations import engine, signals
from automations.models import Automation, Run
from automations.steps import PAST_TIME_LIMIT
from edge.outages import DatabaseOutage

logger = logging.getLogger(__name__)

# A resumed run whose worker is lost goes back to waiting this many times, then is abandoned:
# a run that kills every worker that takes it must end too.
LOST_WORKER_LIMIT = 2
# What a queued run waits for: its start (runs.queue), in a worker.
START = "start"
SWEEP_BATCH = 500


def start(
    *,
    automation: Automation,
    trigger: dict,
    source: str,
    attempt: int = 1,
    claim: uuid.UUID | None = None,
    trigger_key_id: int | None = None,
) -> Run:
    """A running run with a copy of the automation's definition, committed before any step runs.

    claim: the token of the worker that holds it (a delivery's claim); only
    that worker can settle it. trigger_key_id: the PublicKey the trigger's
    URL carried (automations/requested_path.py).
    """
    return Run.objects.create(
        automation=automation,
        definition=automation.definition,
        trigger=trigger,
        trigger_key_id=trigger_key_id,
        source=source,
        attempt=attempt,
        claim=claim,
    )


@dataclasses.dataclass(frozen=True)
class Queued:
    """A run to queue (queue_all): of this automation, with this trigger data, from this source."""

    automation: Automation
    trigger: dict
    source: str
    attempt: int = 1
    at: datetime | None = None
    definition: dict | None = None
    retry_of_id: int | None = None
    trigger_key_id: int | None = None


def queue(*, automation: Automation, trigger: dict, source: str, dispatch: bool = True, **more) -> Run:
    """A run to start in a worker, not in the caller: a delivery, a person's submission, a retry.

    It is committed as waiting for its start, due at `at` (now by default),
    with no step done: the task queued on commit (dispatch; a worker that
    made it may go on with it itself instead) takes it through resume(), and
    the sweeper queues it again if that task is lost, so a run accepted here
    is never lost. Its steps run once, as a resumed run's do (a worker lost
    meanwhile gives it back). A delivery's run starts only while its
    automation is on (DELIVERED). more: Queued's attempt, at, definition (the
    automation's by default) and retry_of_id (the first attempt, for a retry).
    """
    return queue_all([Queued(automation=automation, trigger=trigger, source=source, **more)], dispatch=dispatch)[0]


def queue_all(wanted: list[Queued], *, dispatch: bool = True) -> list[Run]:
    """queue() for many runs at once: one INSERT (a worker turning a batch of deliveries into runs)."""
    from automations import tasks

    now = timezone.now()
    made = Run.objects.bulk_create(
        Run(
            automation=one.automation,
            definition=one.automation.definition if one.definition is None else one.definition,
            trigger=one.trigger,
            trigger_key_id=one.trigger_key_id,
            source=one.source,
            attempt=one.attempt,
            retry_of_id=one.retry_of_id,
            status=Run.Status.WAITING,
            waiting_for={"kind": START, "step": ""},
            resume_at=one.at or now,
        )
        for one in wanted
    )
    for run, one in zip(made, wanted, strict=True):
        run.automation = one.automation  # the caller's instance: a worker goes on with it as it is
        if dispatch and one.at is None:
            transaction.on_commit(lambda run_id=run.pk: tasks.resume_run.delay(run_id), robust=True)
        elif dispatch:
            _resume_at(run.pk, run.resume_at)
    return made


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


def settle(run: Run, claim: uuid.UUID | None) -> bool:
    """Save the outcome advance() set on the run (succeeded, stopped, failed or waiting) if claim still holds it.

    False when it does not: the run was given back, abandoned or deleted
    meanwhile, and the outcome is dropped. A run that waits for a time is
    queued to resume then, and the sweeper resumes it if that task is lost.
    A run of a delivery that failed is retried as its automation's retries
    say: the next attempt is a run of its own, queued in the same
    transaction, so a retry is never lost nor made twice.
    """
    values = {name: getattr(run, name) for name in engine.OUTCOME_FIELDS} | {"claim": None, "lease_until": None}
    held = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, claim=claim)
    if run.status != Run.Status.FAILED:  # one statement: only a failure may have a retry to queue with it
        if not held.update(**values):
            return False
        if run.status == Run.Status.WAITING and run.resume_at is not None:
            _resume_at(run.pk, run.resume_at)
        return True
    try:
        with transaction.atomic():
            if not held.update(**values):
                return False
            _retry(run)
    except DatabaseError:
        # A delete that went through first refuses the retry's foreign key at commit, or PostgreSQL breaks a lock
        # cycle with it by failing this transaction: the run went with its automation.
        if Automation.objects.filter(pk=run.automation_id).exists():
            raise
        return False
    return True


# Runs of deliveries: retried when they fail, as nobody waits for them (a web service caller or a person does), and
# kept while their automation is off, as the deliveries they come from are (SPEC 3). A person's submission taken
# while it was on still gets its run.
DELIVERED = (Run.Source.WEBHOOK,)


def _retry(run: Run) -> Run | None:
    """The next attempt of a failed run, queued after the automation's backoff (doubled after each attempt), or
    None when its attempts are used up, when it failed after a wait, or when the automation was reset since the
    run started (SPEC 3: a reset clears pending automatic retries)."""
    automation = run.automation
    if run.source not in DELIVERED or run.attempt >= automation.retry_attempts:
        return None
    if any("waited_for" in record for record in run.steps):
        return None  # a retry starts over, and this run already acted on what it waited for (docs/automations.md)
    # Read under a lock a reset's FOR UPDATE waits for (and that waits for a reset under way): a reset either
    # committed before this read, and no retry is made, or comes after this commit and ends the retry it finds.
    held = Automation.objects.select_for_update(no_key=True).filter(pk=automation.pk)
    reset_after_run = held.values_list("reset_after_run", flat=True).first()
    if reset_after_run is None or run.pk <= reset_after_run:
        return None
    backoff = timedelta(seconds=automation.retry_backoff * 2 ** (run.attempt - 1))
    return queue(
        automation=automation,
        trigger=run.trigger,
        trigger_key_id=run.trigger_key_id,
        source=run.source,
        attempt=run.attempt + 1,
        at=timezone.now() + backoff,
        retry_of_id=run.retry_of_id or run.pk,
    )


class NotRetried(ValueError):
    """Why a run cannot be retried by hand (retry_by_hand): the text says so to its owner."""


RETRIED_BY_HAND = (Run.Status.FAILED, Run.Status.ABANDONED)


def why_not_retried(run: Run) -> str | None:
    """Why its owner cannot retry this run by hand, or None when they can: the rules of the automatic retry.

    Only a delivery's run: a web service caller, a form's visitor or a chat's visitor waited for theirs, and a
    new attempt would answer nobody, wait on a session nobody holds, or speak again in an old conversation. Not
    after a wait: the run acted on what a person answered, and starting over would ask them again.
    """
    if run.status not in RETRIED_BY_HAND:
        return str(_("only a failed or abandoned run can be retried"))
    if run.source not in DELIVERED:
        return str(_("only a webhook's run can be retried: whoever started this one waited for its answer"))
    if not run.steps and not run.trigger:
        return str(_("it failed before its first step, with no trigger data to start again from"))
    if any(isinstance(record, dict) and "waited_for" in record for record in run.steps):
        return str(_("it acted on a person's answer: a new attempt would ask them again"))
    return None


def retry_by_hand(*, run_id: int, automation_id: int) -> Run:
    """Its owner's retry of a failed or abandoned run of a delivery: a new attempt with the same trigger data (and
    the key its URL carried), queued now.

    Like n8n's "Retry with currently saved workflow": the automation's definition as it is now, from the first
    step. Only the latest attempt of a trigger event is retried, once: the first attempt's row is locked while the
    attempts are read, so two clicks (or a click racing an automatic retry, committed with its run's failure)
    never make two. The automation's row is held too, so a delete waits for the retry or the retry finds it
    gone. The retry waits, as the delivery would, while its automation is off. Raises NotRetried saying why not.
    """
    with transaction.atomic():
        if not Automation.objects.select_for_update(no_key=True).filter(pk=automation_id).exists():
            raise NotRetried(_("no such run"))
        run = Run.objects.select_related("automation").filter(pk=run_id, automation_id=automation_id).first()
        if run is None:
            raise NotRetried(_("no such run"))
        first = run.retry_of_id or run.pk
        Run.objects.select_for_update().filter(pk=first).first()
        if reason := why_not_retried(run):
            raise NotRetried(reason)
        attempts = Run.objects.filter(Q(pk=first) | Q(retry_of_id=first))
        if attempts.filter(attempt__gt=run.attempt).exists() or attempts.filter(pk__gt=run.pk).exists():
            raise NotRetried(_("a later attempt of this run exists: retry that one"))
        again = {"trigger": run.trigger, "source": run.source, "attempt": run.attempt + 1}
        return queue(automation=run.automation, retry_of_id=first, trigger_key_id=run.trigger_key_id, **again)


def fail(run: Run, claim: uuid.UUID | None, reason: str) -> bool:
    """A running run that ended for a fault of ours, not of its steps (a bug): settled failed, and retried as a
    failed run is."""
    run.status, run.error, run.finished_at = Run.Status.FAILED, reason, timezone.now()
    run.waiting_for = run.resume_at = run.answer = None
    return settle(run, claim)


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


def resume(run_id: int, *, answer=None, early: bool = False, queued: Run | None = None) -> bool:
    """Go on with a waiting run in this worker, once: of two racing resumes one takes it, the other gets False.

    A run waiting for a time is taken only once its time has come, unless
    early (an answer that needs no time). The resumed run holds a lease:
    past it, the sweeper gives the run back to waiting for another worker.
    This claim and lease are the only ones a worker holds (DESIGN.md
    contract 5): a delivery's run, a queued form submission, a retry and a
    run that waited are all resumed here. A delivery's run that has not
    started yet, of an automation that is off, is given back untouched
    (False): it starts once the automation is turned on. queued: the run as
    the worker that just queued it holds it, which saves reading it back; it
    is taken only if it still waits for its start (another worker may have
    taken it meanwhile and made it wait for something else), and only while
    its automation is on.
    """
    claim, now = uuid.uuid4(), timezone.now()
    due = Run.objects.filter(pk=run_id, status=Run.Status.WAITING)
    if not early:
        due = due.filter(resume_at__lte=now)
    if queued is not None:
        if not Automation.objects.filter(pk=queued.automation_id, enabled=True).exists():
            return False  # turned off meanwhile: it stays queued until it is turned on
        due = due.filter(waiting_for__kind=START)  # a condition on the row itself: re-checked under a racing claim
    if not due.update(status=Run.Status.RUNNING, claim=claim, lease_until=now + timedelta(seconds=lease_seconds())):
        return False
    run = queued or Run.objects.select_related("automation").get(pk=run_id)
    if not run.automation.enabled and run.source in DELIVERED and (run.waiting_for or {}).get("kind") == START:
        Run.objects.filter(pk=run_id, claim=claim).update(status=Run.Status.WAITING, claim=None, lease_until=None)
        return False
    if run.answer is not None:  # a person's answer, recorded by answer()
        answer = run.answer
    try:
        engine.advance(run, answer=answer, deadline=time.monotonic() + time_limit(), past_deadline=PAST_TIME_LIMIT)
    except Exception as error:
        if DatabaseOutage.is_outage(error):  # not the run's fault: it keeps its lease, as a run whose worker was
            raise  # lost does, and the sweeper gives it back (its task logs the outage once, config/celery.py)
        logger.exception("run %s could not go on", run_id)
        fail(run, claim, "internal error while it went on")
        return True
    settle(run, claim)
    return True


def lease_seconds() -> int:
    """How long a worker holds a run it resumed; past it, the worker is presumed lost (RUN_LEASE_SECONDS)."""
    return settings.RUN_LEASE_SECONDS


def time_limit() -> float:
    """Seconds a resumed run may take: nine tenths of its lease.

    Past the lease the sweeper gives the run to another worker, and its
    steps would happen a second time beside it; the last tenth leaves time
    to settle the outcome while the claim still holds.
    """
    return lease_seconds() * 0.9


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
    """The one sweeper: resume waiting runs whose time has come, give back to waiting the resumed runs whose worker
    was lost, then let other apps queue what they hold that no task does (signals.sweep: hooks' deliveries).

    Beat calls this every RUN_SWEEP_SECONDS: the task queued when a run began
    to wait may have been lost with a broker or a worker. Returns how many
    runs it queued or abandoned.
    """
    from automations import tasks

    now = timezone.now()
    lost = Run.objects.filter(status=Run.Status.RUNNING, lease_until__lt=now)
    abandoned = lost.filter(lost_workers__gte=LOST_WORKER_LIMIT).update(
        status=Run.Status.ABANDONED,
        error=f"its worker was lost {LOST_WORKER_LIMIT + 1} times while it ran",
        finished_at=now,
        claim=None,
        lease_until=None,
    )
    # Its steps are saved only when it settles, so it waits again at the step it waited at, due now.
    requeued = lost.update(
        status=Run.Status.WAITING, resume_at=now, claim=None, lease_until=None, lost_workers=F("lost_workers") + 1
    )
    # Those due before the next sweep are queued for their time (eta), so a delay ends on time.
    soon = now + timedelta(seconds=settings.RUN_SWEEP_SECONDS)
    due = list(
        Run.objects.filter(status=Run.Status.WAITING, resume_at__lte=soon)
        .exclude(source__in=DELIVERED, waiting_for__kind=START, automation__enabled=False)  # kept until it is on
        .order_by("resume_at")
        .values_list("pk", "resume_at")[:SWEEP_BATCH]
    )
    for run_id, when in due:
        tasks.resume_run.apply_async((run_id,), eta=max(when, now))
    if due or abandoned or requeued:
        logger.info("run sweeper: %d due, %d given back to waiting, %d abandoned", len(due), requeued, abandoned)
    signals.sweep.send(sender=Run)
    return len(due) + abandoned


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
