"""Reads on automations: finding one by the key of its web service URL."""

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
