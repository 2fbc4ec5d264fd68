"""Reads on automations: finding one by the key of its public URL."""
from automations import keys
from automations.models import Automation


def automation_for_hook_key(key: str) -> Automation | None:
    """The automation whose webhook URL ends in key. Every miss costs the same: one digest, one indexed query."""
    return _by_digest("hook_key_digest", key)


def automation_for_web_service_key(key: str) -> Automation | None:
    return _by_digest("webservice_key_digest", key)


def _by_digest(field: str, key: str) -> Automation | None:
    wanted = keys.digest(key)
    automation = Automation.objects.filter(**{field: wanted}).first()
    if automation is None or not keys.matches(key, getattr(automation, field)):
        return None
    return automation
