"""Tokens sent in a URL are revoked on sight: a URL is written to access logs, proxies' included, and Referer headers.

OAuth 2.1 forbids bearer tokens in query strings, and /mcp refuses a
request that carries one (docs/mcp.md), but by then the token is in every
log on its way, where redaction (edge/redaction.py) cannot reach a proxy's
copy. So whichever host and path a request names, an `access_token` or
`refresh_token` in its query that is a live token of this service is revoked
before anything else happens, with the other token of its pair: the client
must ask its user again. Unknown values are left alone, at the cost of one
indexed query.
"""

import hashlib
import logging

from django.db import DatabaseError
from django.http import HttpRequest
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from mcp_server import bearer

logger = logging.getLogger(__name__)

PARAMETERS = ("access_token", "refresh_token")


def revoke_exposed(*, token: str) -> bool:
    """Revoke the access or refresh token token, and the other of its pair; False when it is no live token."""
    checksum = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    bearer.forget(checksum)
    AccessToken, RefreshToken = get_access_token_model(), get_refresh_token_model()
    access = AccessToken.objects.filter(token_checksum=checksum).select_related("refresh_token").first()
    refresh = RefreshToken.objects.filter(token_checksum=checksum, revoked__isnull=True).first()
    if access is not None:
        refresh = getattr(access, "refresh_token", None)
        if refresh is None or refresh.revoked is not None:
            access.revoke()
            return True
    if refresh is None:
        return False
    refresh.revoke()  # deletes its access token too
    return True


MAX_TOKEN_CHARS = 255
MAX_TOKENS_CHECKED = 4


class RevokeTokensInUrlsMiddleware:
    """Revokes every token named in a request's query string (PARAMETERS, names compared case aside)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        if request.META.get("QUERY_STRING"):
            named = {value for name, values in request.GET.lists() if name.lower() in PARAMETERS for value in values}
            # A stranger's query may repeat the names a thousand times: each costs a lookup. Tokens this server
            # issues are short; a handful of distinct ones is more than any client sends by mistake.
            for value in sorted(value for value in named if 0 < len(value) <= MAX_TOKEN_CHARS)[:MAX_TOKENS_CHECKED]:
                _revoke_logged(value)
        return self.get_response(request)


def _revoke_logged(token: str) -> None:
    if not token:
        return
    try:
        if revoke_exposed(token=token):
            logger.warning("a token sent in a URL was revoked, with the other token of its pair")
    except DatabaseError:
        logger.exception("a token sent in a URL could not be revoked")
