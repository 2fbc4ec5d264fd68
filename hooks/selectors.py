"""Reads on hooks: the automation a webhook key names, remembered per process for a few seconds."""

from config import process_cache
from publickeys import crypto
from publickeys.models import PublicKey
from publickeys.selectors import target_id_for_key

# Webhook keys that were found are remembered per process this long, so that
# a webhook costs no lookup query. A deleted automation is still refused at
# once (the delivery's foreign key, hooks/intake.py; a large body is not read
# before a fresh lookup, hooks/asgi.py); a key replaced in admin keeps
# working this long in processes that saw it.
HOOK_KEY_MEMORY_SECONDS = 10.0
_remembered = process_cache.named("hooks.webhook_keys", max_size=10_000, seconds=HOOK_KEY_MEMORY_SECONDS)


def automation_id_for_hook_key(key: str, fresh: bool = False) -> int | None:
    """The id of the automation whose webhook URL ends in key; a miss costs the one lookup of publickeys.

    fresh: ask the database even if this process remembers the key (a miss then forgets it).
    """
    remembered_as = crypto.digest(key)  # the key itself is never kept, even in memory
    hit = None if fresh else _remembered.get(remembered_as)
    if hit is not None:
        return hit
    automation_id = target_id_for_key(purpose=PublicKey.Purpose.WEBHOOK, key=key)
    if automation_id is None:
        _remembered.pop(remembered_as)
        return None
    _remembered.set(remembered_as, automation_id)
    return automation_id


def remembered_hook_key(key: str) -> int | None:
    """The automation id for key if this process remembers it, else None (unknown, or not yet looked up)."""
    return _remembered.get(crypto.digest(key))


def forget_hook_key(key: str) -> None:
    _remembered.pop(crypto.digest(key))


def forget_hook_keys() -> None:
    _remembered.clear()
