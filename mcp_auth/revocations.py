"""Access tokens revoked before their expiry, told to every process through the shared cache.

A web process remembers a valid token for MCP_TOKEN_CHECK_SECONDS
(mcp_server/bearer.py). django-oauth-toolkit revokes an access token by
deleting its row, whichever way it goes (RFC 7009 revocation, a refresh
token rotated or reused, a code used twice, admin, /account/agents, its
client or user deleted): Django's post_delete of each row that had not yet
expired leaves a mark under the token's checksum in the shared cache once
the deletion commits. A process reads the mark before it trusts a token it
remembers, so a revocation is refused everywhere as soon as it commits, for
one cache read per remembered request.
"""

import logging

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

logger = logging.getLogger(__name__)

# A process may remember a token it read just before the deletion committed and set its memory a while later
# (a slow request): the mark outlives the window by this much.
MARK_MARGIN_SECONDS = 60


def _key(checksum: str) -> str:
    return f"mcp_auth:revoked:{checksum}"


def mark(checksum: str) -> None:
    """Tell every process that the token of this checksum no longer exists."""
    try:
        cache.set(_key(checksum), 1, timeout=settings.MCP_TOKEN_CHECK_SECONDS + MARK_MARGIN_SECONDS)
    except Exception:  # Redis down, the file cache's disk full: the other processes see it within their window
        logger.warning("could not mark a revoked access token in the shared cache", exc_info=True)


def is_marked(checksum: str) -> bool:
    """Whether the token may have been revoked since a process remembered it; True when the cache cannot tell."""
    try:
        return cache.get(_key(checksum)) is not None
    except Exception:  # not knowing, the memory is not trusted: the database decides
        logger.warning("could not read revocations from the shared cache", exc_info=True)
        return True


def access_token_deleted(sender, instance, using, **kwargs) -> None:
    """post_delete of an AccessToken: marked once the deletion commits; an expired one is refused anyway."""
    if not settings.MCP_TOKEN_CHECK_SECONDS or not instance.token_checksum:
        return
    if instance.expires is not None and instance.expires <= timezone.now():
        return
    checksum = instance.token_checksum
    transaction.on_commit(lambda: mark(checksum), using=using)
