"""Authorization codes already exchanged: a second use is refused and revokes the tokens the first one gave.

RFC 6749 4.1.2 and OAuth 2.1: when a code is used more than once, the
server must deny the request and should revoke every token already issued
from it. Two users of one code means one of them is not its client (a code
read from a redirect, a log or a proxy), and the server cannot tell which,
so both lose: the legitimate client signs in again, the other keeps nothing.

django-oauth-toolkit deletes a grant once its code is exchanged, which
forgets the tokens it gave. A SpentCode row keeps the code's SHA-256 (never
the code) and the token family of the refresh token it gave, for a day
(forget_old, hourly by beat): a code lives a minute, and a replay a day
later finds nothing to refuse that the expired code would not refuse anyway.
"""

import hashlib
import logging
import uuid
from datetime import timedelta

from django.utils import timezone
from oauth2_provider.models import get_refresh_token_model

from mcp_auth.models import SpentCode

logger = logging.getLogger(__name__)

KEPT = timedelta(days=1)


def checksum(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def record(code: str, token_family: uuid.UUID | None) -> None:
    SpentCode.objects.create(code_checksum=checksum(code), token_family=token_family)


def revoke_reuse(code: str, *, client_id: str, also: uuid.UUID | None = None) -> bool:
    """Revoke the tokens a spent code gave, and `also` (a family the losing request of a race just minted).

    Returns whether the code had been spent: False for a code that was never
    issued or merely expired.
    """
    spent = set(SpentCode.objects.filter(code_checksum=checksum(code)).values_list("token_family", flat=True))
    RefreshToken = get_refresh_token_model()
    for family in spent | {also}:
        RefreshToken.revoke_family(family)  # nothing for None
    if spent:
        logger.warning("authorization code used twice (client %s): the tokens it gave are revoked", client_id)
    return bool(spent)


def forget_old(*, now=None) -> int:
    """Delete spent codes older than a day; returns how many."""
    cutoff = (now or timezone.now()) - KEPT
    return SpentCode.objects.filter(spent_at__lt=cutoff).delete()[0]
