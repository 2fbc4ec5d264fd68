"""A user's connected clients: which clients hold a live token for them, since when, their last use; disconnecting.

"Connected" means able to act now or later: a refresh token not revoked, or
an access token not expired. Disconnecting revokes both kinds (the refresh
tokens stay as revoked rows, which reuse detection needs) and deletes the
codes not yet exchanged; the client must then ask the user's consent again.
Every process refuses the revoked access tokens as soon as the revocation
commits (mcp_auth/revocations.py).
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)

from mcp_auth.models import ConnectedClient


@dataclass(frozen=True)
class Connection:
    application: object
    since: datetime  # when it connected: the code exchange that started it, else its oldest live token
    scopes: tuple[str, ...]  # granted by its live tokens, in the order scopes_supported lists them
    last_used_at: datetime | None  # its last request to the MCP server, to the minute; None: not since recorded


SCOPE_ORDER = ("mcp:tools", "mcp:automation_builder")


def _ordered(scopes: set[str]) -> tuple[str, ...]:
    return tuple(sorted(scopes, key=lambda scope: (SCOPE_ORDER.index(scope) if scope in SCOPE_ORDER else 99, scope)))


def connected_clients(*, user) -> list[Connection]:
    """The clients holding a live token of the user, by name; four queries however many there are."""
    AccessToken, RefreshToken = get_access_token_model(), get_refresh_token_model()
    now = timezone.now()
    issued: dict[int, list[datetime]] = {}
    scopes: dict[int, set[str]] = {}
    live_access = AccessToken.objects.filter(user=user, expires__gt=now).values_list(
        "application_id", "created", "scope"
    )
    live_refresh = RefreshToken.objects.filter(user=user, revoked__isnull=True).values_list(
        "application_id", "created", "access_token__scope"
    )
    for application_id, created, scope in (*live_access, *live_refresh):
        issued.setdefault(application_id, []).append(created)
        scopes.setdefault(application_id, set()).update((scope or "").split())
    rows = {row.application_id: row for row in ConnectedClient.objects.filter(user=user, application_id__in=issued)}
    applications = get_application_model().objects.filter(pk__in=issued).order_by("name", "pk")
    connections = []
    for application in applications:
        row = rows.get(application.pk)
        since = (row.connected_at if row else None) or min(issued[application.pk])
        connections.append(
            Connection(
                application=application,
                since=since,
                scopes=_ordered(scopes[application.pk]),
                last_used_at=row.last_used_at if row else None,
            )
        )
    return connections


@transaction.atomic
def disconnect(*, user=None, application=None) -> int:
    """Revoke every live token of the user, of the client, or of the user at the client; returns how many pairs.

    Codes issued and not yet exchanged go too, so a code the client holds
    cannot start the connection again.
    """
    AccessToken, RefreshToken = get_access_token_model(), get_refresh_token_model()
    scope = {key: value for key, value in (("user", user), ("application", application)) if value is not None}
    if not scope:
        raise ValueError("name a user, a client or both")
    revoked = 0
    for refresh_token in RefreshToken.objects.filter(revoked__isnull=True, **scope):
        refresh_token.revoke()  # deletes its access token too
        revoked += 1
    for access_token in AccessToken.objects.filter(**scope):
        access_token.revoke()
        revoked += 1
    get_grant_model().objects.filter(**scope).delete()
    return revoked


def record_connection(*, access_token_checksum: str) -> None:
    """After a code exchange: the connection of its user and client starts now, unless it was already live."""
    AccessToken, RefreshToken = get_access_token_model(), get_refresh_token_model()
    token = AccessToken.objects.filter(token_checksum=access_token_checksum).values("pk", "user_id", "application_id")
    token = token.first()
    if token is None or token["user_id"] is None:
        return
    pair = {"user_id": token["user_id"], "application_id": token["application_id"]}
    already = (
        AccessToken.objects.filter(expires__gt=timezone.now(), **pair).exclude(pk=token["pk"]).exists()
        or RefreshToken.objects.filter(revoked__isnull=True, **pair).exclude(access_token_id=token["pk"]).exists()
    )
    if already:
        ConnectedClient.objects.get_or_create(**pair, defaults={"connected_at": timezone.now()})
    else:
        ConnectedClient.objects.update_or_create(**pair, defaults={"connected_at": timezone.now()})


def record_use(*, user_id: int, application_id: int) -> None:
    """Note that the client used the MCP server for the user now: one statement, an upsert."""
    try:
        with transaction.atomic():
            ConnectedClient.objects.bulk_create(
                [ConnectedClient(user_id=user_id, application_id=application_id, last_used_at=timezone.now())],
                update_conflicts=True,
                unique_fields=["user", "application"],
                update_fields=["last_used_at"],
            )
    except IntegrityError:  # the client or the user was deleted since its token was checked: nothing to note
        pass
