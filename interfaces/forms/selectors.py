"""Reads of form pages: the automation of a hosted form's key, and the run of a session or one-time form key.

Each read costs the same for every key, found or not (DESIGN.md contract 7):
the one lookup of publickeys, then one query by id, sent for a miss too
(with an id no row has), so that a used, expired or never-issued link does
the same database work.

A hosted form's key that was found is remembered with its automation for
FORM_MEMORY_SECONDS per process: its page is opened far more often than its
automation changes, and the two queries were half of its cost
(benchmarks/RESULTS.md). Only hits are remembered, so every miss still does
the same work. The process that turns an automation on or off, edits,
resets, re-keys or deletes it forgets at once (interfaces/apps.py, on
commit); other processes see the change within FORM_MEMORY_SECONDS.
"""

from datetime import datetime

from django.utils import timezone

from automations import runs
from automations.models import Automation, Run
from edge import process_cache
from publickeys import crypto
from publickeys.models import PublicKey
from publickeys.selectors import target_id_for_key

NO_ROW = 0  # ids start at 1
FORM_MEMORY_SECONDS = 5.0
# Keyed by the key's digest: the key itself is never kept, even in memory. The automation kept is shared by the
# process's threads and must be read only.
_remembered_forms = process_cache.named("interfaces.form_automations", max_size=10_000, seconds=FORM_MEMORY_SECONDS)
_forgets = 0  # how often this process forgot its forms: a read that began before the last forget is not kept


def form_automation(key: str, *, fresh: bool = False) -> Automation | None:
    """The automation whose hosted form URL ends in key (its trigger still a form), or None.

    fresh: read the database even if this process remembers the key (a
    submission must not start a run of an automation turned off or deleted
    a moment ago).
    """
    remembered_as = crypto.digest(key)
    if not fresh and (remembered := _remembered_forms.get(remembered_as)) is not None:
        return remembered
    forgets_before = _forgets
    automation_id = target_id_for_key(purpose=PublicKey.Purpose.FORM, key=key)
    automation = Automation.objects.filter(pk=automation_id or NO_ROW).first()
    if automation is None or automation.definition.get("trigger", {}).get("type") != "form":
        _remembered_forms.pop(remembered_as)
        return None
    if forgets_before == _forgets:  # else a change committed while this read was under way: it may predate it
        _remembered_forms.set(remembered_as, automation)
    return automation


def forget_form_automations(_automation=None) -> None:
    """Every hosted form is read again at its next request (after any lifecycle signal of automations)."""
    global _forgets
    _forgets += 1
    _remembered_forms.clear()


def session_run(key: str, *, white_label_owner_id: int | None = None) -> Run | None:
    """The run a form session key follows, or None; None too once Processing > Reset ended it while it waited.

    white_label_owner_id: on a white-label domain, its account; a run of another account's form is then None.
    """
    run_id = target_id_for_key(purpose=PublicKey.Purpose.FORM_SESSION, key=key)
    runs_here = Run.objects.filter(pk=run_id or NO_ROW)
    if white_label_owner_id is not None:
        runs_here = runs_here.filter(automation__owner_id=white_label_owner_id)
    run = runs_here.first()
    if run is not None and runs.ended_while_waiting(run):
        return None
    return run


def one_time_run(key: str) -> Run | None:
    """The run that waits, unexpired, for the one-time form of this key; None for any other key or state."""
    run_id = target_id_for_key(purpose=PublicKey.Purpose.ONE_TIME_FORM, key=key)
    run = Run.objects.filter(pk=run_id or NO_ROW).first()
    if run is None or waiting_form(run, to="link") is None:
        return None
    return run


def waiting_form(run: Run, *, to: str) -> dict | None:
    """What the run waits for when it waits for a form addressed this way (session or link), still open; else None."""
    waiting_for = run.waiting_for or {}
    if run.status != Run.Status.WAITING or waiting_for.get("kind") != "form" or waiting_for.get("to") != to:
        return None
    if run.answer is not None:
        return None  # answered; a worker has yet to go on with it
    expires_at = waiting_for.get("expires_at")
    if expires_at and datetime.fromisoformat(expires_at) <= timezone.now():
        return None  # expired: the sweeper ends the wait at its next look
    return waiting_for


def session_state(run: Run) -> str:
    """Where a session page's run is, as its page shows it: a form for the visitor, done, failed, waiting (for
    someone else, a one-time form or an approval, or for a time: minutes or days), or busy (seconds)."""
    if waiting_form(run, to="session") is not None:
        return "form"
    if run.status in (Run.Status.SUCCEEDED, Run.Status.STOPPED):
        return "done"
    if run.status in (Run.Status.FAILED, Run.Status.ABANDONED):
        return "failed"
    started = (run.waiting_for or {}).get("kind") != "start"  # a run queued for its first step is only seconds away
    due = run.resume_at is not None and run.resume_at <= timezone.now()
    if run.status == Run.Status.WAITING and run.answer is None and started and not due:
        return "waiting"
    return "busy"
