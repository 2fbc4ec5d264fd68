"""Reads on automations: finding one by the key of its web service URL, and its definition document."""

from django.db.models import Subquery

from automations.models import Automation
from publickeys.models import PublicKey
from publickeys.selectors import live_target_ids


def automation_for_web_service_key(key: str) -> Automation | None:
    """The automation whose web service URL ends in key, read afresh: a call needs its current definition.

    One query, the key's lookup and the automation's row together, for a miss as for a hit: a web service call
    pays for no round trip it need not (benchmarks/RESULTS.md, web service round trip).
    """
    ids = live_target_ids(purpose=PublicKey.Purpose.WEB_SERVICE, key=key)
    return Automation.objects.filter(pk=Subquery(ids)).first()


# The order a person reads a document in; the database keeps an object's keys in an order of its own.
READING_ORDER = ("name", "trigger", "steps", "settings")


def document_of(automation: Automation) -> dict:
    """The definition document as export writes it, ready to import elsewhere: its name, trigger, steps and settings
    in that order (docs/automations.md)."""
    document = {"name": automation.name, **automation.definition}
    first = {key: document[key] for key in READING_ORDER if key in document}
    return {**first, **{key: value for key, value in sorted(document.items()) if key not in first}}
