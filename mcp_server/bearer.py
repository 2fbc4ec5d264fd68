"""The bearer check of {MCP_URL}/mcp: which access token a request carries, whose it is, and the 401/403 answers.

A token is valid for this resource server when it exists (revocation deletes
the row in django-oauth-toolkit), has not expired, and was issued for it: its
RFC 8707 resource list holds MCP_URL or MCP_URL/mcp, exactly. A token bound
to no resource is refused too: DOT reads an empty list as "any audience",
which would let a token meant for another API in.

The token is checked by django-oauth-toolkit's validator (its row by
checksum, expiry, the application's state), then its resource binding and
its user's "MCP Tools" permission here. Each MCP request is one HTTP
request, so the check runs on every call: a process remembers a valid token
for MCP_TOKEN_CHECK_SECONDS (2 s; 0 turns this off), since the queries were
the largest cost of a tools/list. Expiry is still checked on every request,
and so is revocation, by one read of the shared cache (mcp_auth/revocations.py):
a revoked token is refused by every process once its revocation commits. A
withdrawn permission takes effect within the window (docs/mcp.md).

Each token's use is recorded for its user's page of connected agents at most
once a minute in each process (USE_RECORD_SECONDS): one upsert, not a write
per request.
"""

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone
from oauth2_provider.settings import oauth2_settings
from oauthlib.common import Request as OAuthRequest

from edge import process_cache
from mcp_auth import connections, revocations
from mcp_auth.models import MCP_TOOLS_PERMISSION

# Valid tokens this process checked lately, by checksum: (Bearer, expires). Only valid ones: a flood of bad tokens
# costs queries, not memory.
_valid = process_cache.named("mcp_auth.valid_tokens", max_size=10_000)
# Tokens whose use this process recorded lately, by checksum.
_recorded = process_cache.named("mcp_auth.recorded_uses", max_size=10_000)
USE_RECORD_SECONDS = 60

TOOLS_SCOPE = "mcp:tools"
BUILDER_SCOPE = "mcp:automation_builder"


@dataclass(frozen=True)
class Bearer:
    """A request's valid token: its user, granted scopes and client."""

    user: object
    scopes: frozenset[str]
    application_id: int


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


def insufficient_scope(needed: tuple[str, ...], *, held: frozenset[str] = frozenset()) -> Refusal:
    """Names every scope the call needs, not only the missing ones: a client re-authorizes with exactly this set.

    The missing ones come first. Scope is an unordered set (RFC 6749 3.3),
    but mcp-remote 0.15 (the bridge Claude Desktop users run) takes a scope
    string equal to scopes_supported joined in its order for a default of
    its own and re-authorizes with its first scope alone, for ever; in
    another order it asks for what the server named.
    """
    scopes = " ".join(sorted(needed, key=lambda scope: scope in held))  # stable: the missing ones, then the rest
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


def forget(checksum: str) -> None:
    """The token with this checksum is checked afresh at its next use in this process (it was just revoked)."""
    _valid.pop(checksum)


def authenticate(*, authorization: str | None) -> Bearer | Refusal:
    """The bearer of the Authorization header, or the refusal to answer with (scopes are the caller's to check)."""
    token = token_from(authorization)
    if token is None:  # none, another scheme or an empty one: no error code then (RFC 6750 3.1), only the way in
        return missing_token()
    # DOT 3 keeps a SHA-256 checksum of each token and looks tokens up by it; the same key for the cache here.
    checksum = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    held = _valid.get(checksum)
    if held is not None and timezone.now() < held[1]:
        if not revocations.is_marked(checksum):
            _note_use(checksum, held[0])
            return held[0]
        _valid.pop(checksum)  # revoked since, perhaps by another process: the database says
    # django-oauth-toolkit's own check: the token's row, not expired, its application still usable, and an audience
    # check that lets unbound tokens pass, which the exact one below refuses.
    request = OAuthRequest(resource_uris()[1])
    if not oauth2_settings.OAUTH2_VALIDATOR_CLASS().validate_bearer_token(token, [], request):
        return invalid_token()
    access, user = request.access_token, request.user
    if user is None or not user.is_active or not set(resource_uris()) & set(access.resource or ()):
        return invalid_token()
    if not user.has_perm(MCP_TOOLS_PERMISSION):  # directly, by a group, or as a superuser
        return no_permission()
    found = Bearer(user=user, scopes=frozenset(access.scope.split()), application_id=access.application_id)
    if settings.MCP_TOKEN_CHECK_SECONDS:
        _valid.set(checksum, (found, access.expires), seconds=settings.MCP_TOKEN_CHECK_SECONDS)
    _note_use(checksum, found)
    return found


def _note_use(checksum: str, found: Bearer) -> None:
    if _recorded.get(checksum) is None:
        _recorded.set(checksum, True, seconds=USE_RECORD_SECONDS)  # before the write: one thread writes
        connections.record_use(user_id=found.user.pk, application_id=found.application_id)
