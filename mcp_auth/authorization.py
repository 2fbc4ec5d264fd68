"""The rules of an authorization request beyond OAuth's own: the resource it names, S256 PKCE, who may approve.

oauthlib and django-oauth-toolkit check the client, its redirect URI, the
response type, the scopes and that a PKCE challenge is present; these are
the service's additions, checked both when the consent page is shown and
when the decision comes back (its hidden fields could have been changed).
"""

import re
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from mcp_auth.models import MCP_TOOLS_PERMISSION

SCOPE_DESCRIPTIONS = {
    "mcp:tools": _("Run and inspect your automations"),
    "mcp:automation_builder": _("Create and change your automations"),
}


class RequestRefused(Exception):
    """An authorization request this service refuses; the client is told with error (an RFC 6749 code)."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error = error
        self.description = description


def allowed_resources() -> tuple[str, str]:
    """The two names of this MCP server a token may be bound to (RFC 8707), compared as exact strings."""
    return settings.MCP_URL, settings.MCP_URL + "/mcp"


def check_resource(values: list[str]) -> str:
    """The one resource the request names, which must be this MCP server; RequestRefused otherwise.

    The token is bound to it (django-oauth-toolkit stores it on the grant and
    the tokens), and the MCP endpoint refuses a token bound to anything else:
    a token obtained for another server cannot be replayed here, nor one
    obtained here elsewhere.
    """
    server, endpoint = allowed_resources()
    if not values or not values[0]:
        raise RequestRefused("invalid_target", f"the resource parameter is required: {server} or {endpoint} (RFC 8707)")
    if len(values) > 1 or values[0] not in (server, endpoint):
        raise RequestRefused("invalid_target", f"resource must be {server} or {endpoint}, this MCP server")
    return values[0]


# BASE64URL(SHA256(verifier)) without padding: 32 bytes, 43 characters.
_S256_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")


def check_pkce(code_challenge: str | None, method: str | None) -> None:
    """A code challenge with method S256; "plain" (the default when no method is named) is refused."""
    if not code_challenge:
        raise RequestRefused("invalid_request", "code_challenge is required (PKCE with S256)")
    if method != "S256":
        raise RequestRefused("invalid_request", 'code_challenge_method must be S256 ("plain" is refused)')
    if not _S256_CHALLENGE.fullmatch(code_challenge):  # else consent gives a code no verifier can ever redeem
        raise RequestRefused("invalid_request", "code_challenge must be 43 base64url characters (RFC 7636 4.2)")


def may_approve(user) -> bool:
    """Only users staff granted "MCP Tools" may let a client act for them."""
    return bool(user and user.is_active and user.has_perm(MCP_TOOLS_PERMISSION))


def describe_scopes(scopes: list[str]) -> list[str]:
    return [str(SCOPE_DESCRIPTIONS.get(scope, scope)) for scope in scopes]


def redirect_target(redirect_uri: str) -> str:
    """What the consent page names as where the approval goes: the host, or scheme://host of an app callback."""
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https"):
        return parts.hostname or redirect_uri
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else f"{parts.scheme}:"
