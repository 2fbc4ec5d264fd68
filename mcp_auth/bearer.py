"""The bearer check of {MCP_URL}/mcp: which access token a request carries, whose it is, and the 401/403 answers.

A token is valid for this resource server when it exists (revocation deletes
the row in django-oauth-toolkit), has not expired, and was issued for it: its
RFC 8707 resource list holds MCP_URL or MCP_URL/mcp, exactly. A token bound
to no resource is refused too: DOT reads an empty list as "any audience",
which would let a token meant for another API in.

The token and its user's "MCP Tools" permission are read in one statement:
each MCP request is one HTTP request, so the check runs on every call. A
process then remembers a valid token for MCP_TOKEN_CHECK_SECONDS (2 s; 0 turns
this off): the query was the largest cost of a tools/list. Expiry is still
checked on every request; a revocation or a withdrawn permission takes effect
within that window (docs/mcp.md).
"""

import functools
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from oauth2_provider.models import AccessToken

from config import process_cache
from mcp_auth.models import MCP_TOOLS_PERMISSION

# Valid tokens this process checked lately, by checksum: (Bearer, expires). Only valid ones: a flood of bad tokens
# costs queries, not memory.
_valid = process_cache.named("mcp_auth.valid_tokens", max_size=10_000)

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


@functools.cache
def _statement() -> str:
    """One statement: the token's row, its user's state, and whether the user holds "MCP Tools" (directly or by a
    group). Written once rather than built by the ORM per request, whose query building cost more than the query."""
    user_model = get_user_model()
    user_permissions = user_model.user_permissions.through._meta.db_table
    user_groups = user_model.groups.through._meta.db_table
    group_permissions = Group.permissions.through._meta.db_table
    permission = (
        f"(SELECT p.id FROM {Permission._meta.db_table} p JOIN {ContentType._meta.db_table} c"
        " ON c.id = p.content_type_id WHERE p.codename = %(codename)s AND c.app_label = %(app_label)s)"
    )
    return (
        f"SELECT t.expires, t.scope, t.resource, u.{user_model._meta.pk.column}, u.is_active, u.is_superuser,"
        f" EXISTS (SELECT 1 FROM {user_permissions} up WHERE up.user_id = u.{user_model._meta.pk.column}"
        f" AND up.permission_id = {permission})"
        f" OR EXISTS (SELECT 1 FROM {user_groups} ug JOIN {group_permissions} gp ON gp.group_id = ug.group_id"
        f" WHERE ug.user_id = u.{user_model._meta.pk.column} AND gp.permission_id = {permission})"
        f" FROM {AccessToken._meta.db_table} t JOIN {user_model._meta.db_table} u"
        f" ON u.{user_model._meta.pk.column} = t.user_id WHERE t.token_checksum = %(checksum)s"
    )


def authenticate(*, authorization: str | None) -> Bearer | Refusal:
    """The bearer of the Authorization header, or the refusal to answer with (scopes are the caller's to check)."""
    token = token_from(authorization)
    if token is None:  # none, another scheme or an empty one: no error code then (RFC 6750 3.1), only the way in
        return missing_token()
    # DOT 3 keeps a SHA-256 checksum of each token and looks tokens up by it (oauth2_validators._load_access_token).
    checksum = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    held = _valid.get(checksum)
    if held is not None and timezone.now() < held[1]:
        return held[0]
    app_label, codename = MCP_TOOLS_PERMISSION.split(".")
    with connection.cursor() as cursor:
        cursor.execute(_statement(), {"checksum": checksum, "codename": codename, "app_label": app_label})
        row = cursor.fetchone()
    if row is None:
        return invalid_token()
    expires, scope, resource, user_id, is_active, is_superuser, may_use = row
    if isinstance(resource, str):  # SQLite hands JSON and times back as text
        resource = json.loads(resource)
    if isinstance(expires, str):
        expires = parse_datetime(expires)
    if expires is not None and timezone.is_naive(expires):  # SQLite keeps UTC without an offset
        expires = timezone.make_aware(expires, UTC)
    if not is_active or expires is None or timezone.now() >= expires:
        return invalid_token()
    if not isinstance(resource, list) or not set(resource_uris()) & set(resource):
        return invalid_token()
    if not (may_use or is_superuser):
        return no_permission()
    # A stand-in holding the pk only: enough to filter by owner and to own what is created; never saved.
    found = Bearer(user=get_user_model()(pk=user_id), scopes=frozenset(scope.split()))
    if settings.MCP_TOKEN_CHECK_SECONDS:
        _valid.set(checksum, (found, expires), seconds=settings.MCP_TOKEN_CHECK_SECONDS)
    return found
