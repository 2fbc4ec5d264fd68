"""The link that confirms a sign-up's address: signed, valid PASSWORD_RESET_TIMEOUT, dead once used or replaced."""

from django.conf import settings
from django.core import signing
from django.utils.crypto import constant_time_compare, salted_hmac

SALT = "accounts.confirm-email"


def _fingerprint(user) -> str:
    # A new password (signing up again) or another address retires every link sent before. Hashed: the token's
    # payload is readable, and the password's hash must not be.
    return salted_hmac(SALT, f"{user.pk}|{user.password}|{user.email}").hexdigest()[:20]


def make_token(user) -> str:
    return signing.dumps([user.pk, _fingerprint(user)], salt=SALT)


def user_id_of(token: str) -> int | None:
    """The account a token names when its signature holds and it is not older than PASSWORD_RESET_TIMEOUT."""
    try:
        user_id, _ = signing.loads(token, salt=SALT, max_age=settings.PASSWORD_RESET_TIMEOUT)
    except (signing.BadSignature, ValueError, TypeError):
        return None
    return user_id if isinstance(user_id, int) else None


def matches(token: str, user) -> bool:
    """True when the token was made for the account as it is now (same password and address)."""
    try:
        _, fingerprint = signing.loads(token, salt=SALT, max_age=settings.PASSWORD_RESET_TIMEOUT)
    except (signing.BadSignature, ValueError, TypeError):
        return False
    return isinstance(fingerprint, str) and constant_time_compare(fingerprint, _fingerprint(user))
