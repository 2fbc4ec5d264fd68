"""What a webhook URL verifies: its Check remembered per process, the requests it refused, and the owner's changes.

docs/webhooks.md, "Verified webhook URLs". The checks themselves are
hooks/signatures.py's; the driver that asks them is hooks/asgi.py.
"""

import base64
import functools
import hmac
import ipaddress
import logging
import secrets

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.db import transaction
from django.db.models import F

from edge import process_cache
from hooks import signatures
from hooks.models import Refusal, Verification
from hooks.signatures import Check

logger = logging.getLogger(__name__)

# The Check of each automation whose key was looked up is remembered as long as the key (hooks/selectors.py), so
# that a webhook to a remembered key costs no query, verified or not.
_checks = process_cache.named("hooks.verifications", max_size=20_000)
NOTHING = Check(scheme="", keys=())  # a URL that verifies nothing
REFUSALS_KEPT = 50  # per automation: the latest, beside the total (Verification.refused_count)
MAX_NETWORKS = 100
TOLERANCE_RANGE = (10, 3600)  # seconds
SECRET_BYTES = 32  # a generated Standard Webhooks secret: 256 bits


def remembered(automation_id: int) -> Check | None:
    """The automation's Check if this process remembers it, else None."""
    return _checks.get(automation_id)


def load(automation_id: int, remember_seconds: float) -> Check:
    """The automation's Check, read from the database (one query on the row's primary key) and remembered."""
    row = Verification.objects.filter(pk=automation_id).first()
    check = NOTHING if row is None else _check_of(row)
    _checks.set(automation_id, check, seconds=remember_seconds)
    return check


def forget(automation_id: int) -> None:
    _checks.pop(automation_id)


def _check_of(row: Verification) -> Check:
    networks = tuple(ipaddress.ip_network(text) for text in row.allowed_networks)
    if not row.scheme:
        return Check(scheme="", keys=(), networks=networks) if networks else NOTHING
    keys, unreadable = [], False
    for sealed in (row.secret_sealed, row.previous_sealed):
        if sealed:
            secret = unseal(sealed)
            if secret is None:
                unreadable = True
                continue
            try:
                keys.append(signatures.hmac_key(row.scheme, secret))
            except ValueError:
                unreadable = True
    return Check(
        scheme=row.scheme,
        keys=tuple(keys),
        tolerance=row.tolerance_seconds,
        networks=networks,
        unreadable=unreadable and not keys,
    )


def record_refusal(*, automation_id: int, reason: str, method: str, path: str, address: str, body_size: int) -> None:
    """Keep the refusal among the automation's latest REFUSALS_KEPT and count it; never raises (the 401 or 403 goes
    out whether or not it could be recorded)."""
    try:
        with transaction.atomic():
            refusal = Refusal.objects.create(
                automation_id=automation_id,
                reason=reason,
                method=method[:10],
                path=path[:2048],
                client_address=address[:64],
                body_size=body_size,
            )
            Verification.objects.filter(pk=automation_id).update(refused_count=F("refused_count") + 1)
            older = Refusal.objects.filter(automation_id=automation_id, pk__lt=refusal.pk).order_by("-pk")
            if (
                oldest_kept := older.values_list("pk", flat=True)[REFUSALS_KEPT - 2 : REFUSALS_KEPT - 1].first()
            ) is not None:
                Refusal.objects.filter(automation_id=automation_id, pk__lt=oldest_kept).delete()
    except Exception:
        logger.warning("a refused webhook of automation %d could not be recorded", automation_id, exc_info=True)


def _fernet() -> Fernet:
    return _fernet_for(settings.URL_KEY_SECRET)


@functools.lru_cache(maxsize=4)
def _fernet_for(secret: str) -> Fernet:
    derived = hmac.digest(secret.encode(), b"flowgate-webhook-signing-secrets", "sha256")
    return Fernet(base64.urlsafe_b64encode(derived))


def seal(secret: str) -> str:
    return _fernet().encrypt(secret.encode()).decode()


def unseal(sealed: str) -> str | None:
    """The secret, or None when it was sealed under another URL_KEY_SECRET."""
    try:
        return _fernet().decrypt(sealed.encode()).decode()
    except (InvalidToken, ValueError):
        return None


def hint(secret: str) -> str:
    """What the owner is shown of a saved secret: its scheme prefix, if any, and its last four characters."""
    prefix = signatures.STANDARD_PREFIX if secret.startswith(signatures.STANDARD_PREFIX) else ""
    return f"{prefix}…{secret[-4:]}" if len(secret) >= 16 else "…"


def new_standard_secret() -> str:
    return signatures.STANDARD_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def networks_from(text: str) -> list[str]:
    """The allow list as the owner wrote it (one network or address a line, or separated by commas or spaces),
    each as its network; ValueError naming the first entry that is none, or when there are too many."""
    networks = []
    for entry in text.replace(",", " ").split():
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(entry[:60]) from None
        if str(network) not in networks:
            networks.append(str(network))
    if len(networks) > MAX_NETWORKS:
        raise ValueError(str(len(networks)))
    return networks


@transaction.atomic
def save(
    *,
    automation_id: int,
    scheme: str,
    tolerance_seconds: int,
    new_secret: str = "",
    keep_previous: bool = True,
    forget_previous: bool = False,
    allowed_networks: list[str],
) -> Verification:
    """Set what the automation's webhook URL verifies. A new secret replaces the current one, which stays accepted
    as the previous one (rotation) when keep_previous; forget_previous ends a rotation. A scheme change forgets
    both old secrets (each scheme reads its secret its own way). This process verifies with it at once; the
    others within HOOK_KEY_MEMORY_SECONDS."""
    row, _ = Verification.objects.select_for_update().get_or_create(pk=automation_id)
    if scheme != row.scheme:
        row.secret_sealed = row.secret_hint = row.previous_sealed = row.previous_hint = ""
    if new_secret:
        if keep_previous and row.secret_sealed:
            row.previous_sealed, row.previous_hint = row.secret_sealed, row.secret_hint
        else:
            row.previous_sealed = row.previous_hint = ""
        row.secret_sealed, row.secret_hint = seal(new_secret), hint(new_secret)
    if forget_previous or not scheme:
        row.previous_sealed = row.previous_hint = ""
    if not scheme:
        row.secret_sealed = row.secret_hint = ""
    row.scheme, row.tolerance_seconds, row.allowed_networks = scheme, tolerance_seconds, allowed_networks
    row.save()
    transaction.on_commit(lambda: forget(automation_id))
    return row
