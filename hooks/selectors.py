"""Reads on hooks: the automation a webhook key names, remembered per process for a few seconds."""
from automations import keys
from automations.models import Automation
from config import process_cache

# Webhook keys that were found are remembered per process this long, so that
# a webhook costs no lookup query. A deleted automation is still refused at
# once (the delivery's foreign key, hooks/intake.py; a large body is not read
# before a fresh lookup, hooks/receiver.py); a key replaced in admin keeps
# working this long in processes that saw it.
HOOK_KEY_MEMORY_SECONDS = 10.0
_remembered = process_cache.named("hooks.webhook_keys", max_size=10_000, seconds=HOOK_KEY_MEMORY_SECONDS)


def automation_id_for_hook_key(key: str, *, fresh: bool = False) -> int | None:
    """The id of the automation whose webhook URL ends in key. A miss always costs one digest and one indexed query.

    fresh: ask the database even if this process remembers the key (a miss then forgets it).
    """
    wanted = keys.digest(key)
    hit = None if fresh else _remembered.get(wanted)
    if hit is not None:
        return hit
    row = Automation.objects.filter(hook_key_digest=wanted).values_list("pk", "hook_key_digest").first()
    if row is None or not keys.matches(key, row[1]):
        _remembered.pop(wanted)
        return None
    _remembered.set(wanted, row[0])
    return row[0]


def remembered_hook_key(key: str) -> int | None:
    """The automation id for key if this process remembers it, else None (unknown, or not yet looked up)."""
    return _remembered.get(keys.digest(key))


def forget_hook_key(key: str) -> None:
    _remembered.pop(keys.digest(key))


def forget_hook_keys() -> None:
    _remembered.clear()
