"""Writes on public keys: issuing a key for a target's URL, which retires the one it had."""

from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction
from django.utils import timezone

from publickeys import crypto
from publickeys.models import PublicKey


def issue_key(*, purpose: str, target: models.Model, expires_at=None) -> str:
    """issue_keyed()'s key alone."""
    return issue_keyed(purpose=purpose, target=target, expires_at=expires_at)[0]


@transaction.atomic
def issue_keyed(*, purpose: str, target: models.Model, expires_at=None) -> tuple[str, int]:
    """A new key for target's URL of this purpose, returned once in clear; the key it had is retired.

    A retired key is kept as its digest (its sealed copy is emptied) and
    answers as any unknown key does. Two issues for the same target and
    purpose at once fail one of them on the one-live-key constraint: callers
    that can race hold the target's row (select_for_update) first.
    expires_at: when the key stops working by itself (None: until retired).
    Returns the key and the id of its row (what a page keeps instead).
    """
    purpose = PublicKey.Purpose(purpose)  # ValueError for a purpose that does not exist
    target_type = ContentType.objects.get_for_model(target)
    PublicKey.objects.filter(
        target_type=target_type, target_id=target.pk, purpose=purpose, retired_at__isnull=True
    ).update(retired_at=timezone.now(), sealed="")
    key = crypto.new_key()
    row = PublicKey.objects.create(
        purpose=purpose,
        digest=crypto.digest(key),
        sealed=crypto.seal(key),
        target_type=target_type,
        target_id=target.pk,
        expires_at=expires_at,
    )
    return key, row.pk


def use_key(key_id) -> bool:
    """Retire the live key with this id as it is used (a one-time link): True for the one call that retired it.

    Of two racing, the second waits for the first's row lock, then finds
    it retired: False.
    """
    return bool(
        PublicKey.objects.filter(pk=key_id, retired_at__isnull=True).update(retired_at=timezone.now(), sealed="")
    )


def retire_key(*, purpose: str, target: models.Model) -> None:
    """Target no longer has a URL of this purpose (its trigger type changed): the key answers as an unknown one."""
    PublicKey.objects.filter(
        target_type=ContentType.objects.get_for_model(target),
        target_id=target.pk,
        purpose=purpose,
        retired_at__isnull=True,
    ).update(retired_at=timezone.now(), sealed="")
