"""Reads on automations: finding one by the key of its public URL."""
import threading
import time

from automations import keys
from automations.models import Automation

# Webhook keys that were found are remembered per process this long, so that
# a webhook costs no lookup query. A deleted automation is still refused at
# once (the delivery's foreign key, hooks/intake.py; a large body is not read
# before a fresh lookup, hooks/receiver.py); a key replaced in admin keeps
# working this long in processes that saw it.
HOOK_KEY_MEMORY_SECONDS = 10.0
_MAX_REMEMBERED = 10_000
_remembered: dict[str, tuple[float, int]] = {}
_lock = threading.Lock()


def automation_id_for_hook_key(key: str, *, fresh: bool = False) -> int | None:
    """The id of the automation whose webhook URL ends in key. A miss always costs one digest and one indexed query.

    fresh: ask the database even if this process remembers the key (a miss then forgets it).
    """
    wanted = keys.digest(key)
    hit = None if fresh else _remembered.get(wanted)
    if hit is not None and hit[0] > time.monotonic():
        return hit[1]
    row = Automation.objects.filter(hook_key_digest=wanted).values_list("pk", "hook_key_digest").first()
    if row is None or not keys.matches(key, row[1]):
        _remembered.pop(wanted, None)
        return None
    with _lock:
        if len(_remembered) >= _MAX_REMEMBERED:
            _remembered.clear()
        _remembered[wanted] = (time.monotonic() + HOOK_KEY_MEMORY_SECONDS, row[0])
    return row[0]


def remembered_hook_key(key: str) -> int | None:
    """The automation id for key if this process remembers it, else None (unknown, or not yet looked up)."""
    hit = _remembered.get(keys.digest(key))
    if hit is not None and hit[0] > time.monotonic():
        return hit[1]
    return None


def forget_hook_key(key: str) -> None:
    _remembered.pop(keys.digest(key), None)


def forget_hook_keys() -> None:
    _remembered.clear()


def automation_for_web_service_key(key: str) -> Automation | None:
    """The automation whose web service URL ends in key, read afresh: a call needs its current definition."""
    wanted = keys.digest(key)
    automation = Automation.objects.filter(webservice_key_digest=wanted).first()
    if automation is None or not keys.matches(key, automation.webservice_key_digest):
        return None
    return automation
