"""Reads on automations: finding one by the key of its web service URL, and its definition document."""

from automations.models import Automation
from publickeys.models import PublicKey
from publickeys.selectors import target_id_for_key


def automation_for_web_service_key(key: str) -> Automation | None:
    """The automation whose web service URL ends in key, read afresh: a call needs its current definition.

    A miss costs the one lookup of publickeys; a hit one query more.
    """
    automation_id = target_id_for_key(purpose=PublicKey.Purpose.WEB_SERVICE, key=key)
    if automation_id is None:
        return None
    return Automation.objects.filter(pk=automation_id).first()


# The order a person reads a document in; the database keeps an object's keys in an order of its own.
READING_ORDER = ("name", "trigger", "steps", "settings")


def document_of(automation: Automation) -> dict:
    """The definition document as export writes it, ready to import elsewhere: its name, trigger, steps and settings
    in that order (docs/automations.md)."""
    document = {"name": automation.name, **automation.definition}
    first = {key: document[key] for key in READING_ORDER if key in document}
    return {**first, **{key: value for key, value in sorted(document.items()) if key not in first}}
