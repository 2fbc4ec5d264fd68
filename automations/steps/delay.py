"""Delay: the run waits for a duration or until a time, holding no worker, then goes on (resumed by beat).

Like n8n's Wait node and Zapier's Delay: a time already past does not wait.
A time without a zone is UTC. The longest wait is MAX_DAYS.
"""

from datetime import UTC, datetime, timedelta

from django.utils import timezone

from automations.steps import StepFailed, Wait

KIND = "delay"
MAX_DAYS = 365

SCHEMA = {
    "type": "object",
    "oneOf": [{"required": ["seconds"]}, {"required": ["until"]}],
    "properties": {
        # A number, or a {{ path }} that gives one.
        "seconds": {"type": ["number", "string"], "minimum": 0, "maximum": MAX_DAYS * 86400},
        # An ISO 8601 date and time, or a {{ path }} that gives one.
        "until": {"type": "string", "minLength": 1},
    },
}


def run(settings: dict, context) -> dict:
    until = _until(settings, timezone.now())
    if until <= timezone.now():
        return {"waited_until": until.isoformat()}
    raise Wait({"kind": KIND, "until": until.isoformat()}, until=until)


def resume(waiting_for: dict, answer) -> dict:
    return {"waited_until": waiting_for["until"]}


def _until(settings: dict, now: datetime) -> datetime:
    if "seconds" in settings:
        try:
            seconds = float(settings["seconds"])
        except (TypeError, ValueError):
            raise StepFailed(f"seconds must be a number, not {str(settings['seconds'])[:100]!r}") from None
        if not 0 <= seconds <= MAX_DAYS * 86400:  # NaN fails both
            raise StepFailed(f"seconds must be between 0 and {MAX_DAYS * 86400}")
        return now + timedelta(seconds=seconds)
    text = settings["until"]
    try:
        until = datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        until = None
    if until is None:
        raise StepFailed(f"until must be an ISO 8601 date and time, not {str(text)[:100]!r}")
    if until.tzinfo is None:
        until = until.replace(tzinfo=UTC)
    if until > now + timedelta(days=MAX_DAYS):
        raise StepFailed(f"until is more than {MAX_DAYS} days away")
    return until
