"""The cryptography of public URL keys (DESIGN.md contract 3): random, stored as a keyed digest and a sealed copy.

The digest (HMAC-SHA256 under URL_KEY_SECRET) is what the database indexes
and looks up, so a dump of the database alone yields no working URL; the
sealed copy (Fernet under the same secret) lets the owner still see the URL
in admin and exports. Changing URL_KEY_SECRET therefore retires every issued
URL at once.
"""

import base64
import functools
import hmac
import secrets

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

KEY_BYTES = 24  # 192 random bits; 32 URL-safe characters
MAX_KEY_LENGTH = 64


def new_key() -> str:
    return secrets.token_urlsafe(KEY_BYTES)


def _derive(purpose: bytes) -> bytes:
    return _derived(settings.URL_KEY_SECRET, purpose)


@functools.lru_cache(maxsize=16)
def _derived(secret: str, purpose: bytes) -> bytes:
    """Derived once per secret: every webhook digests its key, and deriving cost as much as digesting."""
    return hmac.digest(secret.encode(), b"flowgate-url-keys:" + purpose, "sha256")


def digest(key: str) -> str:
    """The lookup digest of a key. Any string is digested the same way, so misses cost what hits cost.

    Only the first MAX_KEY_LENGTH characters count; a lone surrogate (no
    issued key has one) is digested as its code point rather than raising.
    """
    return hmac.digest(_derive(b"digest"), key[:MAX_KEY_LENGTH].encode("utf-8", "surrogatepass"), "sha256").hex()


def _fernet() -> Fernet:
    return Fernet(base64.urlsafe_b64encode(_derive(b"seal")))


def seal(key: str) -> str:
    return _fernet().encrypt(key.encode()).decode()


def unseal(sealed: str) -> str | None:
    """The key, or None when it was sealed under another secret."""
    try:
        return _fernet().decrypt(sealed.encode()).decode()
    except (InvalidToken, ValueError):
        return None
