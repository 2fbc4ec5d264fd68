"""A user's connected clients: which clients hold a live token for them, and disconnecting them.

"Connected" means able to act now or later: a refresh token not revoked, or
an access token not expired. Disconnecting revokes both kinds (the refresh
tokens stay as revoked rows, which reuse detection needs); the client must
then ask the user's consent again.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model


@dataclass(frozen=True)
class Connection:
    application: object
    since: datetime  # when its oldest live token was issued


def connected_clients(*, user) -> list[Connection]:
    AccessToken, RefreshToken = get_access_token_model(), get_refresh_token_model()
    live_access = AccessToken.objects.filter(user=user, expires__gt=timezone.now())
    live_refresh = RefreshToken.objects.filter(user=user, revoked__isnull=True)
    applications = (
        get_application_model()
        .objects.filter(
            Q(pk__in=live_access.values("application_id")) | Q(pk__in=live_refresh.values("application_id"))
        )
        .order_by("name", "pk")
    )
    connections = []
    for application in applications:
        issued = [
            token.created
            for token in (
                live_access.filter(application=application).order_by("created").first(),
                live_refresh.filter(application=application).order_by("created").first(),
            )
            if token is not None
        ]
        connections.append(Connection(application=application, since=min(issued)))
    return connections


def disconnect(*, user=None, application=None) -> int:
    """Revoke every live token of the user, of the client, or of the user at the client; returns how many pairs."""
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
    return revoked
