"""What every step that waits for a person shares: its expiry, and what happens when it comes.

A form, an approval or any other step that asks a person takes two optional
settings, as n8n's Wait node and Zapier's approval steps do:

- `expires_after`: seconds to wait (at most MAX_DAYS days); without it the
  run waits until it is answered, reset or deleted;
- `on_expiry`: `"fail"` (the default: the run fails, saying the step
  expired) or `{"continue_with": <output>}` (the step succeeds with that
  output, and the run goes on).

The step raises `person_wait(...)`, and its resume() begins with
`expired_output(...)` when the answer is None: that is how a wait's time
running out resumes a step (automations.runs.answer never records None).
"""

from datetime import datetime, timedelta

from django.utils import timezone

from automations.steps import StepFailed, Wait

MAX_DAYS = 365
FROM_SETTINGS = object()

EXPIRY_PROPERTIES = {
    "expires_after": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_DAYS * 86400},
    "on_expiry": {
        "oneOf": [
            {"const": "fail"},
            {
                "type": "object",
                "required": ["continue_with"],
                "additionalProperties": False,
                "properties": {"continue_with": {}},
            },
        ]
    },
}


def expiry(settings: dict) -> datetime | None:
    """When a wait for a person that starts now expires: now plus its expires_after, or None (it never does)."""
    expires_after = settings.get("expires_after")
    return timezone.now() + timedelta(seconds=expires_after) if expires_after else None


def person_wait(kind: str, settings: dict, *, expires: str | None | object = FROM_SETTINGS, **waiting_for) -> Wait:
    """The Wait a step raises to ask a person; waiting_for is what Execution History shows (no key in clear).

    expires: the ISO time the wait expires at, as a first execution of the
    step recorded it (automations/effects.py: a step run again keeps its
    first expiry); by default expiry(settings).
    """
    until = expiry(settings) if expires is FROM_SETTINGS else _parsed(expires)
    return Wait(
        {
            "kind": kind,
            **waiting_for,
            "expires_at": until.isoformat() if until else None,
            "on_expiry": settings.get("on_expiry", "fail"),
        },
        until=until,
    )


def expired_output(waiting_for: dict):
    """The step's output once its wait expired unanswered, or StepFailed when the step says to fail."""
    on_expiry = waiting_for.get("on_expiry", "fail")
    if isinstance(on_expiry, dict) and "continue_with" in on_expiry:
        return on_expiry["continue_with"]
    raise StepFailed(f"nobody answered before it expired at {waiting_for.get('expires_at')}")


def iso(when: datetime | None) -> str | None:
    return when.isoformat() if when else None


def _parsed(when: str | None) -> datetime | None:
    return datetime.fromisoformat(when) if when else None
