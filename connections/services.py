"""Connecting an app, reconnecting, renaming and deleting a connection: the writes, each in one transaction.

Whether an automation still uses a connection is the owner's pages' rule
(accounts/connected.py), since automations are theirs to read; here a
connection is only made, changed and removed.
"""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.models import App
from connections import auth_types, checking, keys, routing
from connections.models import Connection

MAX_CREDENTIAL = 4096


class NotConnectable(Exception):
    """The app cannot be connected here (its auth_type's flow is not built yet); the message says so."""


def label_problem(label: str) -> str | None:
    longest = Connection._meta.get_field("label").max_length
    if not label.strip():
        return _("Give the connection a name.")
    if len(label) > longest or any(ord(c) < 32 for c in label):
        return _("A name is one line of at most %(longest)d characters.") % {"longest": longest}
    return None


def credential_problem(credential: str) -> str | None:
    if not credential.strip():
        return _("Paste the key.")
    if len(credential) > MAX_CREDENTIAL or any(ord(c) < 32 for c in credential.strip()):
        return _("That is not a key: it is one line of at most %(longest)d characters.") % {"longest": MAX_CREDENTIAL}
    return None


def _connectable_here(app: App, kind: auth_types.AuthType) -> None:
    """A flow not built yet, or one that signs in on the app's page (connections/oauth.py, begun by the pages): no
    connection is made here without its tokens."""
    if not kind.connectable:
        raise NotConnectable(
            _("%(app)s connects through its own sign-in page, which is not available yet.") % {"app": app.name}
        )
    if kind.signs_in:
        raise NotConnectable(_("%(app)s connects through its own sign-in page.") % {"app": app.name})


def _checked(app: App, kind: auth_types.AuthType, credential: str) -> tuple[str, str, str]:
    """The sealed credential, its hint and the account it opens, after the app's test call accepts it
    (checking.Refused when not).

    The account is read from the test call's answer at the app's routing
    account_path (connections/routing.py), so that a shared endpoint can route to
    it; "" when the app names none, or the answer does not hold one. It is
    never typed by the owner: the answer to the owner's own credential is the
    proof that the account is theirs.
    """
    if not kind.takes_credential:
        return "", "", ""
    credential = credential.strip()
    answer = checking.check_key(app=app, key=credential)
    return keys.seal(credential), keys.hint(credential), routing.account_of(app, answer)


def connect(*, owner, app: App, label: str, credential: str = "") -> Connection:
    """A new connection of owner to app, its credential checked first: a refused key is never saved."""
    kind = auth_types.of(app.auth_type)
    _connectable_here(app, kind)
    sealed, hint, account = _checked(app, kind, credential)  # the call is made outside any transaction
    now = timezone.now()
    return Connection.objects.create(
        owner=owner,
        app=app,
        label=label.strip(),
        auth_type=kind.name,
        credential_sealed=sealed,
        credential_hint=hint,
        account_id=account,
        last_checked_at=now if sealed and checking.test_request_of(app) else None,
    )


def reconnect(*, connection: Connection, credential: str = "") -> Connection:
    """Replace the credential with a new one the app accepts, and mark the connection connected again.

    The auth_type is the app's as it is now: reconnecting is how a connection
    follows a catalog change of it.
    """
    app = connection.app
    kind = auth_types.of(app.auth_type)
    _connectable_here(app, kind)
    sealed, hint, account = _checked(app, kind, credential)
    with transaction.atomic():
        connection.auth_type = kind.name
        connection.credential_sealed, connection.credential_hint = sealed, hint
        connection.account_id = account  # reconnected to another account: its deliveries follow
        connection.state, connection.problem = Connection.State.CONNECTED, ""
        connection.last_checked_at = timezone.now() if sealed and checking.test_request_of(app) else None
        connection.save()
    return connection


def rename(*, connection: Connection, label: str) -> Connection:
    connection.label = label.strip()
    connection.save(update_fields=["label", "updated_at"])
    return connection


def needs_reconnection(*, connection: Connection, problem: str) -> None:
    """The app no longer takes the credential (or no key opens it): automations using it will fail until the owner
    reconnects. Called by the connector runtime when an app refuses a stored credential."""
    Connection.objects.filter(pk=connection.pk).update(
        state=Connection.State.NEEDS_RECONNECTION, problem=problem[:500], updated_at=timezone.now()
    )


def delete(*, connection: Connection) -> None:
    connection.delete()


def rotate_keys(*, batch_size: int = 500) -> tuple[int, int]:
    """Re-seal every credential (an oauth_v2 connection's refresh token too) under the first CONNECTION_KEYS key:
    (connections re-sealed, connections unreadable).

    An unreadable credential (sealed under a key already dropped) cannot be
    re-sealed: its connection is marked as needing reconnection.
    """
    done = unreadable = 0
    last = 0
    while True:
        with transaction.atomic():
            rows = list(
                Connection.objects.select_for_update()
                .filter(pk__gt=last)
                .exclude(credential_sealed="", refresh_sealed="")
                .order_by("pk")
                .only("pk", "credential_sealed", "refresh_sealed")[:batch_size]
            )
            if not rows:
                return done, unreadable
            for row in rows:
                try:
                    Connection.objects.filter(pk=row.pk).update(
                        credential_sealed=keys.reseal(row.credential_sealed) if row.credential_sealed else "",
                        refresh_sealed=keys.reseal(row.refresh_sealed) if row.refresh_sealed else "",
                    )
                    done += 1
                except keys.Unreadable:
                    Connection.objects.filter(pk=row.pk).update(
                        state=Connection.State.NEEDS_RECONNECTION,
                        problem="Its key could not be read: connect it again.",
                    )
                    unreadable += 1
            last = rows[-1].pk
