"""The oauth_v2 connection flow: the owner signs in on the app's own page and the app gives us tokens.

An app's OAuth client lives in its catalog entry's internal auth_config
(never in the feed):

    "auth_config": {
        "authorize_url": "https://acorn.example/oauth/authorize",
        "token_url": "https://api.acorn.example/oauth/token",
        "client_id": "flowgate",
        "client_secret_env": "ACORN_CLIENT_SECRET",   # or "client_secret": "..." in the entry itself
        "scopes": ["leads:write"],
        "pkce": true,                                  # S256; off unless the app says it supports it
        "client_auth": "body",                         # or "basic": how the client proves itself to token_url
        "credential": {"headers": {"Authorization": "Bearer {{api_key}}"}}   # where the access token goes
    }

The state sent to the app is random, used once, and lives in the owner's
Django session with what it was begun for (the app, the name, for a
reconnection the connection, the PKCE verifier), so a callback another
browser or another account carries finds nothing. Every call to token_url
goes out as the connector's calls do (automations/outbound.py): the address
guard, no redirects, one deadline; its answer is read bounded and parsed
with automations/jsonsafe.py, so a hostile token endpoint ends in a sentence,
never a 500. Tokens are sealed under CONNECTION_KEYS (connections/keys.py).

A refresh happens shortly before the access token expires and once after
the app refuses it (401); it runs under a lock on the connection's row and
re-reads it first, so two workers never both spend a refresh token the app
rotates. An app that refuses the refresh marks the connection as needing
reconnection; an app that cannot be reached does not (docs/connections.md).
"""

import base64
import hashlib
import os
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from automations import jsonsafe, outbound
from connections import keys
from connections.models import Connection

SESSION_KEY = "connections_oauth"
STATE_SECONDS = 600  # as long as an owner may take on the app's sign-in page
MAX_PENDING = 5  # authorizations begun in one session and not finished: the oldest is forgotten first
REFRESH_MARGIN_SECONDS = 60  # an access token this close to its expiry is refreshed before the call
READ_AT_MOST = 64 * 1024
MAX_TOKEN = 16 * 1024
MAX_EXPIRES_IN = 10 * 365 * 24 * 3600
REFRESH_ATTEMPTS = 3
MAX_MESSAGE = 300


class Failed(Exception):
    """The flow or a refresh did not give tokens; the message is in the owner's words.

    reconnect: the app refused (a refresh token it no longer takes, a client it does not know): signing in again is
    the way out. False when it could not be reached or answered 5xx: trying later may work.
    """

    def __init__(self, message: str, *, reconnect: bool = False):
        super().__init__(message)
        self.reconnect = reconnect


@dataclass(frozen=True)
class Client:
    """An app's OAuth client, as its auth_config describes it."""

    authorize_url: str
    token_url: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...] = ()
    pkce: bool = False
    basic_auth: bool = False


@dataclass(frozen=True)
class Tokens:
    access: str
    refresh: str
    expires_at: object  # a datetime, or None when the app gave no expires_in


def _http_url(value) -> str | None:
    if not isinstance(value, str) or len(value) > 2000:
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    return value if parts.scheme in ("http", "https") and parts.hostname else None


def client_of(app) -> Client | None:
    """The app's OAuth client, or None when its auth_config lacks the authorize URL, token URL or client id.

    The secret is read from the environment variable client_secret_env names when it names one, so that it can
    stay out of the catalog's rows and admin; else from client_secret.
    """
    config = app.auth_config if isinstance(app.auth_config, dict) else {}
    authorize_url, token_url = _http_url(config.get("authorize_url")), _http_url(config.get("token_url"))
    client_id = config.get("client_id")
    if not authorize_url or not token_url or not isinstance(client_id, str) or not client_id:
        return None
    secret_env = config.get("client_secret_env")
    secret = (
        os.environ.get(secret_env, "") if isinstance(secret_env, str) and secret_env else config.get("client_secret")
    )
    scopes = config.get("scopes") or ()
    if isinstance(scopes, str):
        scopes = scopes.split()
    return Client(
        authorize_url=authorize_url,
        token_url=token_url,
        client_id=client_id,
        client_secret=secret if isinstance(secret, str) else "",
        scopes=tuple(str(scope) for scope in scopes if isinstance(scope, str) and scope),
        pkce=config.get("pkce") is True,
        basic_auth=config.get("client_auth") == "basic",
    )


def redirect_uri() -> str:
    """Our callback on the base host: the one address to register with the app."""
    return settings.BASE_URL.rstrip("/") + reverse("account-connection-oauth-callback")


def begin(session, *, owner_id: int, app, label: str, connection_id: int | None = None) -> str:
    """The URL of the app's sign-in page for this owner, the state remembered in session; Failed when the app's
    catalog entry does not describe its OAuth client."""
    client = client_of(app)
    if client is None:
        raise Failed(_("%(app)s's sign-in is not set up in the catalog yet.") % {"app": app.name})
    now = time.time()
    pending = {state: begun for state, begun in _pending(session).items() if begun["expires"] > now}
    for state in sorted(pending, key=lambda state: pending[state]["expires"])[: max(0, len(pending) - MAX_PENDING + 1)]:
        del pending[state]
    state = secrets.token_urlsafe(32)
    verifier = secrets.token_urlsafe(64) if client.pkce else ""
    pending[state] = {
        "owner": owner_id,
        "app": app.pk,
        "label": label,
        "connection": connection_id,
        "verifier": verifier,
        "expires": now + STATE_SECONDS,
    }
    session[SESSION_KEY] = pending
    query = {"response_type": "code", "client_id": client.client_id, "redirect_uri": redirect_uri(), "state": state}
    if client.scopes:
        query["scope"] = " ".join(client.scopes)
    if verifier:
        digest = hashlib.sha256(verifier.encode()).digest()
        query["code_challenge"] = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        query["code_challenge_method"] = "S256"
    parts = urlsplit(client.authorize_url)
    kept = [(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True) if name not in query]
    return urlunsplit(parts._replace(query=urlencode(kept + list(query.items())), fragment=""))


def _pending(session) -> dict:
    pending = session.get(SESSION_KEY)
    return dict(pending) if isinstance(pending, dict) else {}


def finish(session, *, owner, params) -> tuple[Connection, bool]:
    """The callback: the state checked and spent, the code exchanged, the tokens sealed on a connected connection;
    with whether it was a reconnection.

    Failed, and nothing made or changed, for a state this session did not begin (another browser's, another
    account's, one used or expired), a refusal on the app's page, or a token endpoint that gives no tokens.
    """
    from catalog.models import App

    state = params.get("state")
    pending = _pending(session)
    begun = pending.pop(state, None) if isinstance(state, str) else None
    session[SESSION_KEY] = pending
    if begun is None or begun.get("owner") != owner.pk or begun.get("expires", 0) <= time.time():
        raise Failed(
            _("This sign-in was not started here, was already used, or took too long. Start connecting again.")
        )
    app = App.objects.filter(pk=begun["app"]).first()
    client = client_of(app) if app is not None else None
    if client is None:
        raise Failed(_("That app can no longer be connected here."))
    error = params.get("error")
    if error == "access_denied":
        raise Failed(_("You did not allow access on %(app)s's page: nothing was connected.") % {"app": app.name})
    if error:
        said = _cleaned(params.get("error_description") or error)
        raise Failed(_("%(app)s did not connect. It said: %(message)s") % {"app": app.name, "message": said})
    code = params.get("code")
    if not _token_like(code):
        raise Failed(
            _("%(app)s sent you back without an authorization code. Start connecting again.") % {"app": app.name}
        )
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri()}
    if begun.get("verifier"):
        data["code_verifier"] = begun["verifier"]
    deadline = time.monotonic() + float(settings.CONNECTION_CHECK_TIMEOUT_SECONDS)
    tokens = _token_call(app, client, data, deadline)
    account = _account(app, tokens)
    return _store(owner=owner, app=app, begun=begun, tokens=tokens, account=account), begun.get(
        "connection"
    ) is not None


def _account(app, tokens: Tokens) -> str:
    """The account the new token opens, for an app whose shared endpoint routes by account: read from its test
    call's answer, as a pasted key's is (connections/routing.py), so that the owner never types it."""
    from connections import checking, routing

    if not routing.rule_of(app.auth_config).get("account_path"):
        return ""
    try:
        return routing.account_of(app, checking.check_key(app=app, key=tokens.access))
    except checking.Refused as refused:
        raise Failed(str(refused)) from None


def _store(*, owner, app, begun: dict, tokens: Tokens, account: str = "") -> Connection:
    now = timezone.now()
    fields = {
        "account_id": account,
        "auth_type": "oauth_v2",
        "credential_sealed": keys.seal(tokens.access),
        "credential_hint": "",
        "refresh_sealed": keys.seal(tokens.refresh) if tokens.refresh else "",
        "token_expires_at": tokens.expires_at,
        "state": Connection.State.CONNECTED,
        "problem": "",
        "last_checked_at": now,
    }
    if begun.get("connection") is not None:
        with transaction.atomic():
            connection = (
                Connection.objects.select_for_update().filter(pk=begun["connection"], owner=owner, app=app).first()
            )
            if connection is None:
                raise Failed(_("That connection is gone: connect the app again."))
            for name, value in fields.items():
                setattr(connection, name, value)
            connection.save()
        return connection
    return Connection.objects.create(owner=owner, app=app, label=begun.get("label") or app.name, **fields)


def access_token(connection: Connection, *, seconds: float, refused: str | None = None) -> str:
    """The connection's access token in clear, for one call: refreshed first when it expires within
    REFRESH_MARGIN_SECONDS, or when the app just refused `refused` (the token the caller used). Failed otherwise,
    the connection marked as needing reconnection when the app refused the refresh."""
    try:
        if refused is None and not _due(connection):
            return _open(connection)
        return _refresh(connection, deadline=time.monotonic() + seconds, refused=refused)
    except Failed as failure:
        if failure.reconnect:
            from connections import services

            services.needs_reconnection(connection=connection, problem=str(failure))  # after the lock's transaction
        raise


@transaction.atomic
def _refresh(connection: Connection, *, deadline: float, refused: str | None) -> str:
    row = Connection.objects.select_for_update().select_related("app").get(pk=connection.pk)
    if row.state != Connection.State.CONNECTED:
        raise Failed(_("The connection to %(app)s needs reconnection.") % {"app": row.app.name})
    current = _open(row)
    if refused is None and not _due(row):
        return current  # another worker refreshed it while this one waited for the lock
    if refused is not None and current != refused:
        return current  # the same, after a 401: the row holds a newer token than the one the app refused
    client = client_of(row.app)
    if client is None:
        raise Failed(_("%(app)s's sign-in is not set up in the catalog any more.") % {"app": row.app.name})
    if not row.refresh_sealed:
        raise Failed(
            _("%(app)s's access ended and it gave no way to renew it: sign in again.") % {"app": row.app.name},
            reconnect=True,
        )
    tokens = _refreshed(row, client, deadline)
    row.credential_sealed = keys.seal(tokens.access)
    if tokens.refresh:
        row.refresh_sealed = keys.seal(tokens.refresh)  # an app that rotates them; else the old one stays
    row.token_expires_at = tokens.expires_at
    row.last_checked_at = timezone.now()
    row.save(update_fields=["credential_sealed", "refresh_sealed", "token_expires_at", "last_checked_at"])
    connection.credential_sealed, connection.token_expires_at = row.credential_sealed, row.token_expires_at
    return tokens.access


def _due(connection: Connection) -> bool:
    expires = connection.token_expires_at
    return expires is not None and expires <= timezone.now() + timedelta(seconds=REFRESH_MARGIN_SECONDS)


def _open(connection: Connection) -> str:
    try:
        return keys.unseal(connection.credential_sealed)
    except keys.Unreadable:
        raise Failed(_("Its tokens could not be read: connect it again."), reconnect=True) from None


def _refreshed(row: Connection, client: Client, deadline: float) -> Tokens:
    """Tokens for the row's refresh token; an app that cannot be reached or answers 5xx is asked again, 1 s then
    2 s later, within the deadline."""
    try:
        refresh = keys.unseal(row.refresh_sealed)
    except keys.Unreadable:
        raise Failed(_("Its tokens could not be read: connect it again."), reconnect=True) from None
    data = {"grant_type": "refresh_token", "refresh_token": refresh}
    for attempt in range(1, REFRESH_ATTEMPTS + 1):
        try:
            return _token_call(row.app, client, data, deadline)
        except Failed as failed:
            wait = float(2 ** (attempt - 1))
            if failed.reconnect or attempt == REFRESH_ATTEMPTS or time.monotonic() + wait >= deadline:
                raise
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def _token_call(app, client: Client, data: dict, deadline: float) -> Tokens:
    """POST data to the app's token_url as its client; the tokens, or Failed in the owner's words."""
    data = {**data}
    headers = {"Accept": "application/json"}
    if client.basic_auth:
        pair = f"{client.client_id}:{client.client_secret}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
    else:
        data["client_id"] = client.client_id
        if client.client_secret:
            data["client_secret"] = client.client_secret
    left = deadline - time.monotonic()
    names = {"app": app.name}
    if left <= 0:
        raise Failed(_("%(app)s did not answer in time. Try again later.") % names)
    try:
        with (
            outbound.client(deadline=deadline, allow_private=settings.HTTP_STEP_ALLOW_PRIVATE, timeout=left) as http,
            http.stream("POST", client.token_url, data=data, headers=headers) as response,
        ):
            body, whole = _read(response)
    except outbound.AddressRefused:
        raise Failed(
            _("%(app)s's address is inside this service's network, where calls are not allowed.") % names
        ) from None
    except httpx.TimeoutException:
        raise Failed(_("%(app)s did not answer in time. Try again later.") % names) from None
    except (httpx.HTTPError, httpx.InvalidURL, ValueError):
        raise Failed(_("%(app)s could not be reached. Try again later.") % names) from None
    document = _document(body, response.headers.get("content-type", "")) if whole else None
    status = response.status_code
    if status >= 500 or status == 429:
        raise Failed(_("%(app)s's sign-in service answered %(status)d. Try again later.") % {**names, "status": status})
    if not 200 <= status < 300:
        sent = (client.client_secret, data.get("code"), data.get("refresh_token"), data.get("code_verifier"))
        said = _said(document, secrets_in=sent)
        reason = _("%(app)s refused to give access (%(status)d).") % {**names, "status": status}
        raise Failed(f"{reason} {said}".strip(), reconnect=True)
    access = document.get("access_token") if isinstance(document, dict) else None
    if not _token_like(access):
        raise Failed(_("%(app)s's answer held no usable access token.") % names, reconnect=True)
    refresh = document.get("refresh_token")
    expires_in = document.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isascii() and expires_in.isdigit():
        expires_in = int(expires_in)
    expires_at = None
    if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) and expires_in >= 0:
        expires_at = timezone.now() + timedelta(seconds=min(float(expires_in), MAX_EXPIRES_IN))
    return Tokens(access=access, refresh=refresh if _token_like(refresh) else "", expires_at=expires_at)


def _token_like(value) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_TOKEN and value.isprintable() and value.isascii()


def _read(response: httpx.Response) -> tuple[bytes, bool]:
    """At most READ_AT_MOST bytes of the body, and whether that was all of it."""
    content = bytearray()
    for chunk in response.iter_bytes():
        content += chunk
        if len(content) > READ_AT_MOST:
            return bytes(content[:READ_AT_MOST]), False
    return bytes(content), True


def _document(body: bytes, content_type: str):
    """The token endpoint's answer: JSON, or a form-encoded body as some older apps send; None when neither."""
    text = body.decode("utf-8", errors="replace")
    if "x-www-form-urlencoded" in content_type:
        return dict(parse_qsl(text)) if "\x00" not in text else None
    try:
        return jsonsafe.loads(text)  # bounded: nested thousands deep is not JSON here, never a RecursionError
    except (ValueError, RecursionError):
        return None


def _said(document, *, secrets_in) -> str:
    """The app's own words (error_description, else error), never echoing a secret we sent."""
    if not isinstance(document, dict):
        return ""
    found = next((document[name] for name in ("error_description", "error") if isinstance(document.get(name), str)), "")
    text = _cleaned(found)
    for secret in secrets_in:
        if isinstance(secret, str) and len(secret) >= 4:
            text = text.replace(secret, "…")
    return _("It said: %(message)s") % {"message": text} if text else ""


def _cleaned(text) -> str:
    text = " ".join("".join(c if c.isprintable() else " " for c in str(text)).split())
    return text[:MAX_MESSAGE] + ("…" if len(text) > MAX_MESSAGE else "")
