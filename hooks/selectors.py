"""Reads on hooks: the automation a webhook key names, remembered per process for a few seconds."""

from publickeys.models import PublicKey
from publickeys.selectors import forget_key, forget_keys, remembered_target_id, target_id_for_key

# Webhook keys that were found are remembered per process this long, so that
# a webhook costs no lookup query. A deleted automation is still refused at
# once (the delivery's foreign key, hooks/intake.py; a large body is not read
# before a fresh lookup, hooks/asgi.py); a key replaced in admin keeps
# working this long in processes that saw it.
HOOK_KEY_MEMORY_SECONDS = 10.0
WEBHOOK = PublicKey.Purpose.WEBHOOK.value


def automation_id_for_hook_key(key: str, fresh: bool = False) -> int | None:
    """The id of the automation whose webhook URL ends in key; a miss costs the one lookup of publickeys.

    fresh: ask the database even if this process remembers the key (a miss then forgets it).
    """
    return target_id_for_key(purpose=WEBHOOK, key=key, remember_seconds=HOOK_KEY_MEMORY_SECONDS, fresh=fresh)


def remembered_hook_key(key: str) -> int | None:
    """The automation id for key if this process remembers it, else None (unknown, or not yet looked up)."""
    return remembered_target_id(purpose=WEBHOOK, key=key)


def forget_hook_key(key: str) -> None:
    forget_key(purpose=WEBHOOK, key=key)


def forget_hook_keys() -> None:
    forget_keys()
