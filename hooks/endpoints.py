"""The webhook URLs of connections and apps (docs/connections.md, "App triggers: per connected account and shared
endpoint"): issued at their first need, one live key per connection or app, shown to its owner or to staff."""

from django.db import transaction

from catalog.models import App, Operation
from connections.models import Connection
from publickeys.models import PublicKey
from publickeys.selectors import url_of
from publickeys.services import issue_key


def connection_url(connection: Connection) -> str | None:
    """The connection's own webhook URL when its app has a per-connection trigger, else None.

    The owner pastes it into the app once: every automation of theirs with
    such a trigger on this connection runs on each delivery.
    """
    if not _has_mode(connection.app_id, Operation.DeliveryMode.PER_CONNECTION):
        return None
    return _url(PublicKey.Purpose.CONNECTION_HOOK, connection)


def app_url(app: App) -> str | None:
    """The app's shared callback URL when it has a shared-endpoint trigger, else None: registered with the app once
    (by staff, or the connector builder); the app's routing rule sends each delivery to its connections."""
    if not _has_mode(app.pk, Operation.DeliveryMode.SHARED_ENDPOINT):
        return None
    return _url(PublicKey.Purpose.APP_HOOK, app)


def _has_mode(app_id: int, mode: str) -> bool:
    return Operation.objects.filter(app_id=app_id, kind=Operation.Kind.TRIGGER, delivery_mode=mode).exists()


def _url(purpose: str, target) -> str:
    """target's URL of this purpose, its key issued now if it has none (or one sealed under a secret since dropped).

    Two first views at once: the target's row is held while one issues, and
    the other then finds the key.
    """
    if (url := url_of(purpose=purpose, target=target)) is not None:
        return url
    with transaction.atomic():
        type(target).objects.select_for_update().filter(pk=target.pk).first()
        if (url := url_of(purpose=purpose, target=target)) is None:
            issue_key(purpose=purpose, target=target)
            url = url_of(purpose=purpose, target=target)
    return url
