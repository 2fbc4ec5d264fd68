"""Reads of form pages: the automation of a hosted form's key, and the run of a session or one-time form key.

Each read costs the same for every key, found or not (DESIGN.md contract 7):
the one lookup of publickeys, then one query by id, sent for a miss too
(with an id no row has), so that a used, expired or never-issued link does
the same database work.
"""

from datetime import datetime

from django.utils import timezone

from automations import runs
from automations.models import Automation, Run
from publickeys.models import PublicKey
from publickeys.selectors import target_id_for_key

NO_ROW = 0  # ids start at 1


def form_automation(key: str) -> Automation | None:
    """The automation whose hosted form URL ends in key (its trigger still a form), or None."""
    automation_id = target_id_for_key(purpose=PublicKey.Purpose.FORM, key=key)
    automation = Automation.objects.filter(pk=automation_id or NO_ROW).first()
    if automation is None or automation.definition.get("trigger", {}).get("type") != "form":
        return None
    return automation


def session_run(key: str) -> Run | None:
    """The run a form session key follows, or None; None too once Processing > Reset ended it while it waited."""
    run_id = target_id_for_key(purpose=PublicKey.Purpose.FORM_SESSION, key=key)
    run = Run.objects.filter(pk=run_id or NO_ROW).first()
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
    """Where a session page's run is, as its page shows it: a form for the visitor, done, failed, or busy."""
    if waiting_form(run, to="session") is not None:
        return "form"
    if run.status in (Run.Status.SUCCEEDED, Run.Status.STOPPED):
        return "done"
    if run.status in (Run.Status.FAILED, Run.Status.ABANDONED):
        return "failed"
    return "busy"
