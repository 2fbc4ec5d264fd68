"""The answer of a webhook URL (SPEC 4.2, 7.2) to one request, read from its WSGI environ.

One function decides every answer to /automation-{key} and
/webhook/automation-{key}, whichever way the request arrived: through the
lean WSGI entry in front of Django (hooks/wsgi.py), through Django's own view
(hooks/views.py, which the test client and any request the entry hands on
reach), or through the event-loop entry of the hooks process (hooks/asgi.py).
All of them send exactly what it returns, so they cannot drift apart.

That function, exchange(), does no I/O itself: it yields what it needs (is
maintenance mode on, which automation has this key, the body, storing the
delivery) and its driver supplies it. receive() here supplies each by
blocking its thread; hooks/asgi.py answers from memory where it can and
awaits the rest, so an event loop never waits on the database.
"""
import json
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from automations import selectors
from hooks import intake, maintenance, services
from hooks.exceptions import BodyTooLarge
from hooks.incoming import Incoming, read_body, with_body
from hooks.intake import Accepted, AutomationGone

HOOK_METHODS = ("GET", "POST", "PUT", "HEAD", "OPTIONS")
DELIVERY_HEADER = "X-Flowgate-Delivery-Id"
_ALLOW = ", ".join(HOOK_METHODS)


@dataclass(frozen=True)
class Reply:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    content_type: str | None = None  # None: no body, no Content-Type


class Need:
    """What exchange() asks its driver for; an Accepted row it yields asks for that row to be stored."""

    MAINTENANCE = "maintenance"  # send back whether maintenance mode is on
    AUTOMATION = "automation"  # send back the id of the automation whose hook key this is, or None
    BODY = "body"  # send back the body, or throw BodyTooLarge


Exchange = Generator["str | Accepted", object, Reply]


def exchange(environ: dict, key: str) -> Exchange:
    """Answer one request; a key of "" (or any key that matches nothing) is a miss like every other.

    Storing the yielded Accepted row may throw AutomationGone back in (the
    automation was deleted since its key was remembered).
    """
    if (yield Need.MAINTENANCE):
        return Reply(503)
    method = environ["REQUEST_METHOD"]
    if method not in HOOK_METHODS:
        return Reply(405, [("Allow", _ALLOW)])
    automation_id = yield Need.AUTOMATION
    if automation_id is None:
        return Reply(404)
    if method in ("HEAD", "OPTIONS"):
        return Reply(200, _cors(environ, method))
    try:
        body = yield Need.BODY
    except BodyTooLarge:
        return Reply(413)
    inbound = with_body(environ, body)
    if handshake := _handshake(environ, inbound):
        return handshake
    accepted = services.new_delivery(automation_id=automation_id, incoming=inbound)
    try:
        yield accepted
    except AutomationGone:
        selectors.forget_hook_key(key)
        return Reply(404)
    # SPEC 4.2: 200 with an empty body, sent only after the row is committed.
    return Reply(200, [(DELIVERY_HEADER, str(accepted.public_id)), *_cors(environ, method)])


def receive(environ: dict, key: str) -> Reply:
    """exchange() driven in the request's thread: the body from wsgi.input, the row stored before returning."""

    def supply(need: "str | Accepted"):
        if need is Need.MAINTENANCE:
            return maintenance.active()
        if need is Need.AUTOMATION:
            return selectors.automation_id_for_hook_key(key)
        if need is Need.BODY:
            return read_body(environ)
        intake.store(need)
        return None

    return drive(exchange(environ, key), supply)


def drive(steps: Exchange, supply: Callable[["str | Accepted"], object]) -> Reply:
    """Run exchange() to its Reply, sending it what supply() returns for each need, or throwing in what it raised."""
    supplied, error = None, None
    while True:
        try:
            need = steps.throw(error) if error else steps.send(supplied)
        except StopIteration as finished:
            return finished.value
        try:
            supplied, error = supply(need), None
        except (BodyTooLarge, AutomationGone) as raised:
            supplied, error = None, raised


def _cors(environ: dict, method: str) -> list[tuple[str, str]]:
    headers = [("Access-Control-Allow-Origin", "*")]
    if method == "OPTIONS":
        headers += [("Access-Control-Allow-Methods", _ALLOW), ("Access-Control-Max-Age", "86400")]
        if wanted := environ.get("HTTP_ACCESS_CONTROL_REQUEST_HEADERS"):
            headers.append(("Access-Control-Allow-Headers", wanted[:1000]))
    else:
        headers.append(("Access-Control-Expose-Headers", DELIVERY_HEADER))
    return headers


def _handshake(environ: dict, inbound: Incoming) -> Reply | None:
    """The verification handshakes of SPEC 4.2, answered without a run: X-Hook-Secret and {"challenge": ...}."""
    secret = environ.get("HTTP_X_HOOK_SECRET")
    if secret is not None:
        return Reply(200, [("X-Hook-Secret", secret), ("Access-Control-Allow-Origin", "*")])
    body = inbound.body
    if b'"challenge"' in body[:1024] and len(body) < 64 * 1024:
        try:
            document = json.loads(body)
        except ValueError:
            return None
        if isinstance(document, dict) and list(document) == ["challenge"]:
            answer = json.dumps({"challenge": document["challenge"]}).encode()
            return Reply(200, [("Access-Control-Allow-Origin", "*")], answer, "application/json")
    return None
