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

from hooks import intake, maintenance, selectors, services
from hooks.exceptions import BodyError
from hooks.incoming import Incoming, read_body, with_body
from hooks.intake import Accepted, AutomationGone

HOOK_METHODS = ("GET", "POST", "PUT", "HEAD", "OPTIONS")
DELIVERY_HEADER = "X-Flowgate-Delivery-Id"
_ALLOW = ", ".join(HOOK_METHODS)
# A body declared larger than this, or chunked, is read only after its key is looked up afresh. A key
# remembered from before its automation was deleted would otherwise cost reading the whole body (26 MB took
# half a second) before the insert failed, where a miss costs one lookup; a smaller body costs about as much
# to read as the failed insert that answers 404.
FRESH_LOOKUP_ABOVE_BYTES = 64 * 1024


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
    FRESH_AUTOMATION = "fresh automation"  # the same, read from the database, not from memory
    BODY = "body"  # send back the body, or throw a BodyError


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
    reads_body = method not in ("HEAD", "OPTIONS")
    automation_id = yield Need.FRESH_AUTOMATION if reads_body and _large_body(environ) else Need.AUTOMATION
    if automation_id is None:
        return Reply(404)
    if not reads_body:
        return Reply(200, _cors(environ, method))
    try:
        body = yield Need.BODY
    except BodyError as refused:  # nothing is stored; a client that left never reads the answer
        return Reply(refused.status_code)
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
        if need is Need.FRESH_AUTOMATION:
            return selectors.automation_id_for_hook_key(key, fresh=True)
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
        except (BodyError, AutomationGone) as raised:
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
    """The verification handshakes of SPEC 4.2, answered without a run: X-Hook-Secret and {"challenge": ...}.

    A body that cannot be read as JSON (too deep for the parser, say), or
    whose challenge cannot be echoed as strict JSON (NaN, Infinity, 1e999, a
    lone surrogate), is not a handshake: it is an ordinary delivery.
    """
    secret = environ.get("HTTP_X_HOOK_SECRET")
    if secret is not None:
        return Reply(200, [("X-Hook-Secret", secret), ("Access-Control-Allow-Origin", "*")])
    body = inbound.body
    if b'"challenge"' in body[:1024] and len(body) < 64 * 1024:
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if isinstance(document, dict) and list(document) == ["challenge"]:
            if (answer := _strict_json({"challenge": document["challenge"]})) is not None:
                return Reply(200, [("Access-Control-Allow-Origin", "*")], answer, "application/json")
    return None


def _strict_json(document) -> bytes | None:
    """document as JSON that every parser reads (RFC 8259, UTF-8), or None when it has no such form."""
    try:
        # allow_nan=False refuses NaN and the infinities; encoding the unescaped text refuses lone surrogates.
        return json.dumps(document, allow_nan=False, ensure_ascii=False).encode()
    except (ValueError, RecursionError):
        return None


def _large_body(environ: dict) -> bool:
    if "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        return True
    declared = environ.get("CONTENT_LENGTH", "")
    return declared.isdigit() and int(declared) > FRESH_LOOKUP_ABOVE_BYTES
