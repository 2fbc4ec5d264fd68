"""Reads on hooks: the automation a webhook key names and what its URL verifies, remembered per process for a few
seconds."""

from typing import NamedTuple

from connections import routing
from edge import process_cache
from hooks import verification
from publickeys.models import PublicKey
from publickeys.selectors import forget_key as forget_key_of
from publickeys.selectors import forget_keys, remembered_target_id, target_id_for_key

# Webhook keys that were found are remembered per process this long, so that
# a webhook costs no lookup query. A deleted automation is still refused at
# once (the delivery's foreign key, hooks/intake.py; a large body is not read
# before a fresh lookup, hooks/asgi.py); a key replaced in admin keeps
# working this long in processes that saw it.
HOOK_KEY_MEMORY_SECONDS = 10.0
WEBHOOK = PublicKey.Purpose.WEBHOOK.value
CONNECTION_HOOK = PublicKey.Purpose.CONNECTION_HOOK.value
APP_HOOK = PublicKey.Purpose.APP_HOOK.value
# An app's routing header (lower case, "" for none) by app id, read with its shared endpoint's key and remembered as
# long: the hooks process keeps the header's value on the delivery, since a delivery keeps no headers.
_routing_headers = process_cache.named("hooks.routing_headers", max_size=10_000)


def automation_id_for_hook_key(key: str, fresh: bool = False) -> int | None:
    """The id of the automation whose webhook URL ends in key; a miss costs the one lookup of publickeys.

    fresh: ask the database even if this process remembers the key (a miss then forgets it).
    A key found whose URL's verification this process does not remember has
    it read too, and remembered as long (hooks/verification.py): one more
    query on a primary key per key and process every HOOK_KEY_MEMORY_SECONDS,
    none per webhook.
    """
    if not fresh and (found := remembered_target_id(purpose=WEBHOOK, key=key)) is not None:
        if verification.remembered(found) is None:
            verification.load(found, HOOK_KEY_MEMORY_SECONDS)
        return found
    found = target_id_for_key(purpose=WEBHOOK, key=key, remember_seconds=HOOK_KEY_MEMORY_SECONDS, fresh=True)
    # Read with the key, so that both expire together; a fresh lookup (before a large body) keeps what is remembered.
    if found is not None and (not fresh or verification.remembered(found) is None):
        verification.load(found, HOOK_KEY_MEMORY_SECONDS)
    return found


def remembered_hook_key(key: str) -> int | None:
    """The automation id for key if this process remembers it and its verification, else None (unknown, or not yet
    looked up)."""
    found = remembered_target_id(purpose=WEBHOOK, key=key)
    return found if found is not None and verification.remembered(found) is not None else None


def check_for(automation_id: int) -> verification.Check:
    """What the automation's URL verifies (hooks/signatures.py), from memory or one query; blocks."""
    return verification.remembered(automation_id) or verification.load(automation_id, HOOK_KEY_MEMORY_SECONDS)


def forget_hook_key(key: str) -> None:
    forget_key_of(purpose=WEBHOOK, key=key)


def forget_hook_keys() -> None:
    forget_keys()


class Routed(NamedTuple):
    """A connection's or app's shared URL as found: its id, and for an app its routing header ("" for none)."""

    target_id: int
    header: str = ""


def routed_target(purpose: str, key: str, fresh: bool = False) -> Routed | None:
    """The connection (CONNECTION_HOOK) or app (APP_HOOK) whose URL ends in key, remembered as a webhook key is; an
    app's routing header is read with it. Blocks on a miss."""
    if not fresh and (found := remembered_routed_target(purpose, key)) is not None:
        return found
    found = target_id_for_key(purpose=purpose, key=key, remember_seconds=HOOK_KEY_MEMORY_SECONDS, fresh=True)
    if found is None or purpose != APP_HOOK:
        return None if found is None else Routed(found)
    from catalog.models import App

    auth_config = App.objects.filter(pk=found).values_list("auth_config", flat=True).first()
    header = routing.rule_of(auth_config).get("header", "")
    _routing_headers.set(found, header, seconds=HOOK_KEY_MEMORY_SECONDS)
    return Routed(found, header)


def remembered_routed_target(purpose: str, key: str) -> Routed | None:
    """routed_target's answer if this process remembers it, for an app with its routing header, else None.

    The header travels with the id: read again later (after the body, which may take seconds), it could have been
    forgotten meanwhile, and the delivery stored without the account that routes it."""
    found = remembered_target_id(purpose=purpose, key=key)
    if found is None or purpose != APP_HOOK:
        return None if found is None else Routed(found)
    header = _routing_headers.get(found)
    return None if header is None else Routed(found, header)


def forget_key(purpose: str, key: str) -> None:
    """A connection's or app's key found gone at the insert: looked up again next time."""
    forget_key_of(purpose=purpose, key=key)
