"""Sealing of connection credentials under CONNECTION_KEYS: the first key seals, any of them opens.

MultiFernet makes rotation two steps with no moment when a credential cannot
be read: put the new key first (everything sealed before still opens under
the old one, second), re-seal every credential (`rotate_connection_keys`),
then drop the old key.
"""

import functools

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class Unreadable(Exception):
    """A credential sealed under a key CONNECTION_KEYS no longer holds: the owner reconnects."""


@functools.lru_cache(maxsize=4)
def _fernet_for(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key.encode()) for key in keys])


def _fernet() -> MultiFernet:
    return _fernet_for(tuple(settings.CONNECTION_KEYS))


def seal(credential: str) -> str:
    return _fernet().encrypt(credential.encode()).decode()


def unseal(sealed: str) -> str:
    """The credential in clear, for the call to its app only; Unreadable when no key opens it."""
    try:
        return _fernet().decrypt(sealed.encode()).decode()
    except (InvalidToken, ValueError):
        raise Unreadable("sealed under a key CONNECTION_KEYS no longer holds") from None


def reseal(sealed: str) -> str:
    """The same credential sealed under the first key; Unreadable when no key opens it."""
    try:
        return _fernet().rotate(sealed.encode()).decode()
    except (InvalidToken, ValueError):
        raise Unreadable("sealed under a key CONNECTION_KEYS no longer holds") from None


def hint(credential: str) -> str:
    """What the owner is shown of a saved credential: its last four characters, and only of a long one."""
    return f"…{credential[-4:]}" if len(credential) >= 12 else "…"
