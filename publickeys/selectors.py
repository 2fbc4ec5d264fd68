"""Reads on public keys: the one lookup of a key (remembered per process when its caller says so), and the key and
URL a target has for a purpose."""

import hmac
from datetime import timedelta

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models import Q
from django.utils import timezone

from edge import process_cache
from publickeys import crypto
from publickeys.models import PublicKey

Purpose = PublicKey.Purpose

# Where each purpose's URL lives (SPEC 4.2, 4.3): the setting of its host and its path, {key} in place of the key.
URL_SHAPES = {
    Purpose.WEBHOOK: ("HOOKS_URL", "/automation-{key}"),
    Purpose.WEB_SERVICE: ("HOOKS_URL", "/webservice-{key}"),
    Purpose.FORM: ("BASE_URL", "/form/{key}"),
    Purpose.ONE_TIME_FORM: ("BASE_URL", "/form/s/{key}"),
    Purpose.FORM_SESSION: ("BASE_URL", "/form/run/{key}"),
    Purpose.CHAT_WIDGET: ("BASE_URL", "/webchat/{key}"),
    Purpose.APPROVAL_QUEUE: ("BASE_URL", "/moderation?queue={key}"),
    Purpose.CONNECTION_HOOK: ("HOOKS_URL", "/connection-{key}"),
    Purpose.APP_HOOK: ("HOOKS_URL", "/app-{key}"),
}


# Keys found, by (purpose, the key's digest): the key itself is never kept, even in memory. Misses are never
# remembered, so a flood of bad keys costs queries, not memory.
_found = process_cache.named("publickeys.found_keys", max_size=20_000)


def target_id_for_key(*, purpose: str, key: str, remember_seconds: float = 0, fresh: bool = False) -> int | None:
    """The id of the target whose URL of this purpose ends in key, or None.

    Any string is a key to look up. Every miss (unknown, altered, of another
    purpose, retired, expired, of a deleted target) costs what a hit costs:
    one keyed digest and one query on the digest's unique index.

    remember_seconds: a key found is remembered by this process that long
    and costs no query meanwhile, for a caller that may act on a key that
    was replaced or retired that long ago (webhooks: hooks/selectors.py).
    fresh: ask the database even if the key is remembered (a miss then
    forgets it).
    """
    wanted = crypto.digest(key)
    if remember_seconds and not fresh and (hit := _found.get((purpose, wanted))) is not None:
        return hit
    live = _live_by_digest(purpose, wanted)
    found_id = None
    for target_id, stored in live.values_list("target_id", "digest")[:1]:
        if hmac.compare_digest(wanted, stored):
            found_id = target_id
    if remember_seconds:
        if found_id is None:
            _found.pop((purpose, wanted))
        else:
            _found.set((purpose, wanted), found_id, seconds=remember_seconds)
    return found_id


def live_target_ids(*, purpose: str, key: str) -> models.QuerySet:
    """The id of the target whose URL of this purpose ends in key, as a subquery (empty for any miss): for a caller
    that reads the target in the same query, and so pays one query for a hit as for a miss
    (automations/selectors.py)."""
    return _live_by_digest(purpose, crypto.digest(key)).values("target_id")[:1]


def _live_by_digest(purpose: str, digest: str) -> models.QuerySet:
    return PublicKey.objects.filter(digest=digest, purpose=purpose, retired_at__isnull=True).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
    )


def remembered_target_id(*, purpose: str, key: str) -> int | None:
    """The target id for key if this process remembers it (target_id_for_key's remember_seconds), else None."""
    return _found.get((purpose, crypto.digest(key)))


def forget_key(*, purpose: str, key: str) -> None:
    _found.pop((purpose, crypto.digest(key)))


def forget_keys() -> None:
    """Every remembered key is looked up again at its next use."""
    _found.clear()


def _live(target: models.Model):
    """Target's live keys (at most one per purpose)."""
    return PublicKey.objects.filter(
        target_type=ContentType.objects.get_for_model(target), target_id=target.pk, retired_at__isnull=True
    )


def live_key_id(*, purpose: str, target: models.Model) -> int | None:
    """The id of target's live key of this purpose (what a page keeps instead of the key), or None."""
    return _live(target).filter(purpose=purpose).values_list("pk", flat=True).first()


def key_of(*, purpose: str, target: models.Model) -> str | None:
    """The live key of target's URL of this purpose; None if it has none, or it was sealed under another secret."""
    sealed = _live(target).filter(purpose=purpose).values_list("sealed", flat=True).first()
    return crypto.unseal(sealed) if sealed else None


def url_of(*, purpose: str, target: models.Model) -> str | None:
    """The full URL of target for this purpose, as its owner sees it; None when key_of() is None."""
    key = key_of(purpose=purpose, target=target)
    if key is None:
        return None
    host_setting, path = URL_SHAPES[purpose]
    return getattr(settings, host_setting) + path.format(key=key)


def live_key_id_for_key(*, purpose: str, key: str) -> int | None:
    """The id of the live key row of this key, or None: target_id_for_key's one lookup, for its row."""
    return (
        PublicKey.objects.filter(digest=crypto.digest(key), purpose=purpose, retired_at__isnull=True)
        .values_list("pk", flat=True)
        .first()
    )


def key_id_live_at(*, purpose: str, target: models.Model, at, remembered_seconds: float) -> int | None:
    """The id of the key of target's URL of this purpose that a request received at `at` carried, or None.

    Only the key live at `at` opened that URL, but a process may accept a
    key for remembered_seconds after it was retired (target_id_for_key's
    remember_seconds): when a key was retired within that long before `at`,
    either may have been carried, and the answer is None.
    """
    since = at - timedelta(seconds=remembered_seconds)
    candidates = (
        PublicKey.objects.filter(
            target_type=ContentType.objects.get_for_model(target), target_id=target.pk, purpose=purpose
        )
        .filter(created_at__lte=at)
        .filter(Q(retired_at__isnull=True) | Q(retired_at__gt=since))
    )
    found = list(candidates.values_list("pk", flat=True)[:2])
    return found[0] if len(found) == 1 else None


def key_of_id(public_key_id: int | None) -> str | None:
    """The key of the live key row with this pk; None once it is retired (its sealed copy emptied) or deleted."""
    if public_key_id is None:
        return None
    sealed = PublicKey.objects.filter(pk=public_key_id, retired_at__isnull=True).values_list("sealed", flat=True)
    sealed = sealed.first()
    return crypto.unseal(sealed) if sealed else None


def link_of_key_id(public_key_id) -> tuple[str, str] | None:
    """(purpose label, URL) of the live key with this pk: for pages that keep its id, not the key (Execution History).

    None when there is no such live key (retired, deleted) or it was sealed under another secret.
    """
    if not isinstance(public_key_id, int):
        return None
    row = PublicKey.objects.filter(pk=public_key_id, retired_at__isnull=True).values_list("purpose", "sealed").first()
    key = crypto.unseal(row[1]) if row and row[1] else None
    if key is None:
        return None
    purpose = Purpose(row[0])
    host_setting, path = URL_SHAPES[purpose]
    return purpose.label, getattr(settings, host_setting) + path.format(key=key)


def live_purposes(*, target: models.Model) -> set[str]:
    """The purposes for which target has a live key (the URLs it has)."""
    return set(_live(target).values_list("purpose", flat=True))
