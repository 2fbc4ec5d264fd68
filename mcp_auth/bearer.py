"""The bearer check of {MCP_URL}/mcp: which access token a request carries, whose it is, and the 401/403 answers.

A token is valid for this resource server when it exists (revocation deletes
the row in django-oauth-toolkit), has not expired, and was issued for it: its
RFC 8707 resource list holds MCP_URL or MCP_URL/mcp, exactly. A token bound
to no resource is refused too: DOT reads an empty list as "any audience",
which would let a token meant for another API in.

The token and its user's "MCP Tools" permission are read in one query: each
MCP request is one HTTP request, so the check runs on every call.
"""

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import Permission
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from oauth2_provider.models import AccessToken

from mcp_auth.models import MCP_TOOLS_PERMISSION

TOOLS_SCOPE = "mcp:tools"
BUILDER_SCOPE = "mcp:automation_builder"


@dataclass(frozen=True)
class Bearer:
    """A request's valid token: its user and granted scopes."""

    user: object
    scopes: frozenset[str]


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: its HTTP status, WWW-Authenticate challenge (or none) and error text."""

    status: int
    challenge: str | None
    error: str


def resource_uris() -> tuple[str, str]:
    """The two resource identifiers a token may be bound to: the server and its endpoint (RFC 9728 path document)."""
    return settings.MCP_URL, settings.MCP_URL + "/mcp"


def metadata_url() -> str:
    """The metadata a 401 names: the path document, whose `resource` is the exact URL clients call."""
    return settings.MCP_URL + "/.well-known/oauth-protected-resource/mcp"


def _challenge(**params: str) -> str:
    fields = {"resource_metadata": metadata_url(), **params}
    return "Bearer " + ", ".join(f'{name}="{value}"' for name, value in fields.items())


def missing_token() -> Refusal:
    return Refusal(401, _challenge(scope=TOOLS_SCOPE), "authentication required")


def invalid_token() -> Refusal:
    return Refusal(
        401,
        _challenge(error="invalid_token", error_description="The access token is invalid, expired or revoked"),
        "invalid access token",
    )


def token_in_query() -> Refusal:
    """OAuth 2.1 forbids tokens in URLs (they end up in logs and Referer headers): refused, even a valid one."""
    return Refusal(
        400,
        _challenge(error="invalid_request", error_description="Send the access token in the Authorization header"),
        "access tokens are not accepted in the query string",
    )


def insufficient_scope(needed: tuple[str, ...]) -> Refusal:
    """Names every scope the call needs, not only the missing ones: a client re-authorizes with exactly this set."""
    scopes = " ".join(needed)
    return Refusal(
        403,
        _challenge(error="insufficient_scope", scope=scopes, error_description=f"This call needs {scopes}"),
        f"this call needs the scopes {scopes}",
    )


def no_permission() -> Refusal:
    """The user lost "MCP Tools": no challenge, since signing in again would not help (only staff can give it back)."""
    return Refusal(403, None, "your account does not have the MCP Tools permission")


def token_from(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def _has_permission():
    app_label, codename = MCP_TOOLS_PERMISSION.split(".")
    user = OuterRef("user_id")
    return Exists(
        Permission.objects.filter(codename=codename, content_type__app_label=app_label).filter(
            Q(user=user) | Q(group__user=user)
        )
    )


def authenticate(*, authorization: str | None) -> Bearer | Refusal:
    """The bearer of the Authorization header, or the refusal to answer with (scopes are the caller's to check)."""
    if authorization is None or not authorization.strip():
        return missing_token()
    token = token_from(authorization)
    if token is None:
        return invalid_token()
    # DOT 3 keeps a SHA-256 checksum of each token and looks tokens up by it (oauth2_validators._load_access_token).
    checksum = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    row = (
        AccessToken.objects.select_related("user")
        .annotate(may_use=_has_permission())
        .filter(token_checksum=checksum)
        .first()
    )
    if row is None or row.user is None or not row.user.is_active:
        return invalid_token()
    if row.expires is None or timezone.now() >= row.expires:
        return invalid_token()
    if not set(resource_uris()) & set(row.resource or ()):
        return invalid_token()
    if not (row.may_use or row.user.is_superuser):
        return no_permission()
    return Bearer(user=row.user, scopes=frozenset(row.scope.split()))


def check_scopes(bearer: Bearer, needed: tuple[str, ...]) -> Refusal | None:
    return None if set(needed) <= bearer.scopes else insufficient_scope(needed)
