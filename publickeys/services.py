"""Writes on public keys: issuing a key for a target's URL, which retires the one it had."""

from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction
from django.utils import timezone

from publickeys import crypto
from publickeys.models import PublicKey


@transaction.atomic
def issue_key(*, purpose: str, target: models.Model, expires_at=None) -> str:
    """A new key for target's URL of this purpose, returned once in clear; the key it had is retired.

    A retired key is kept as its digest (its sealed copy is emptied) and
    answers as any unknown key does. Two issues for the same target and
    purpose at once fail one of them on the one-live-key constraint: callers
    that can race hold the target's row (select_for_update) first.
    expires_at: when the key stops working by itself (None: until retired).
    """
    purpose = PublicKey.Purpose(purpose)  # ValueError for a purpose that does not exist
    target_type = ContentType.objects.get_for_model(target)
    PublicKey.objects.filter(
        target_type=target_type, target_id=target.pk, purpose=purpose, retired_at__isnull=True
    ).update(retired_at=timezone.now(), sealed="")
    key = crypto.new_key()
    PublicKey.objects.create(
        purpose=purpose,
        digest=crypto.digest(key),
        sealed=crypto.seal(key),
        target_type=target_type,
        target_id=target.pk,
        expires_at=expires_at,
    )
    return key


def retire_key(*, purpose: str, target: models.Model) -> None:
    """Target no longer has a URL of this purpose (its trigger type changed): the key answers as an unknown one."""
    PublicKey.objects.filter(
        target_type=ContentType.objects.get_for_model(target),
        target_id=target.pk,
        purpose=purpose,
        retired_at__isnull=True,
    ).update(retired_at=timezone.now(), sealed="")
