"""Approval: put an item in the automation's approval queue and wait for a person to approve or reject it.

As in Zapier's and n8n's approval steps, the decision is the step's output,
`{"decision": "approved" | "rejected", "comment", "decided_at", "item_id"}`:
a rejection does not fail the run, so a condition step after it can branch
on `{{steps.<id>.decision}}`. The item's title and text take {{ paths }};
details (any JSON) are shown below them. With `expires_after`, an item
nobody decided in time does what `on_expiry` says (automations/waiting.py).

The queue and its page belong to interfaces/, which automations does not
import (STYLE.md 9): the step asks for the item through the signal
automations.signals.place_approval_item, which interfaces answers.
"""

import json

from automations import effects, jsonsafe, signals, waiting
from automations.steps import StepFailed

KIND = "approval"
TITLE_LIMIT = 200
TEXT_LIMIT = 10_000

SCHEMA = {
    "type": "object",
    "required": ["title"],
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 1000},
        "text": {"type": "string", "maxLength": 100_000},
        "details": {},
        **waiting.EXPIRY_PROPERTIES,
    },
}

DETAILS_LIMIT = 20_000


def run(settings: dict, context) -> dict:
    if not signals.place_approval_item.has_listeners() or context.run is None:
        raise StepFailed("approval queues are not served by this installation")
    title = _text(settings["title"], TITLE_LIMIT) or "Approval"
    text = _text(settings.get("text", ""), TEXT_LIMIT)
    try:
        details = jsonsafe.clean(settings.get("details"))
    except ValueError as error:
        raise StepFailed(f"its details could not be stored: {error}") from None
    if len(json.dumps(details, ensure_ascii=False)) > DETAILS_LIMIT:  # every view of the queue shows them
        raise StepFailed(f"its details are longer than {DETAILS_LIMIT} characters as JSON")

    def place() -> dict:
        until = waiting.expiry(settings)
        placed = signals.answer(
            signals.place_approval_item, run=context.run, title=title, text=text, details=details, expires_at=until
        )
        return {
            "item_id": placed["item_id"],
            "public_key_id": placed["public_key_id"],
            "expires_at": waiting.iso(until),
        }

    # Run again for the same run (its worker lost before the run was saved as waiting), the step finds the item it
    # placed then and waits on it: a second item would ask the approvers twice.
    placed = effects.once(context, place)
    wait = waiting.person_wait(KIND, settings, expires=placed["expires_at"], title=title)
    wait.waiting_for.update(item_id=placed["item_id"], public_key_id=placed["public_key_id"])
    raise wait


def resume(waiting_for: dict, answer) -> dict:
    if answer is None:
        return waiting.expired_output(waiting_for)
    return {**answer, "item_id": waiting_for.get("item_id")}


def _text(value, limit: int) -> str:
    """A {{ path }} may fill a field with a number or an object: shown as text, cut at limit characters."""
    if not isinstance(value, str):
        value = "" if value is None else str(value)
    return jsonsafe.clean_text(value)[:limit]
