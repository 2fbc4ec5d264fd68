"""The answer of a webhook URL (SPEC 4.2, 7.2) to one request, read from its WSGI environ.

One function answers every request to /automation-{key} and
/webhook/automation-{key}, whichever way it arrived: through the lean WSGI
entry in front of Django (hooks/wsgi.py, what gunicorn serves) or through
Django's own view (hooks/views.py, which the test client and any request the
entry hands on reach). Both send exactly what this returns, so the two
cannot drift apart.
"""
import json
from dataclasses import dataclass, field

from automations import selectors
from hooks import maintenance, services
from hooks.exceptions import BodyTooLarge
from hooks.incoming import Incoming, from_environ
from hooks.intake import AutomationGone

HOOK_METHODS = ("GET", "POST", "PUT", "HEAD", "OPTIONS")
DELIVERY_HEADER = "X-Flowgate-Delivery-Id"
_ALLOW = ", ".join(HOOK_METHODS)


@dataclass(frozen=True)
class Reply:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    content_type: str | None = None  # None: no body, no Content-Type


def receive(environ: dict, key: str) -> Reply:
    """Answer one request; a key of "" (or any key that matches nothing) is a miss like every other."""
    if maintenance.active():
        return Reply(503)
    method = environ["REQUEST_METHOD"]
    if method not in HOOK_METHODS:
        return Reply(405, [("Allow", _ALLOW)])
    automation_id = selectors.automation_id_for_hook_key(key)
    if automation_id is None:
        return Reply(404)
    if method in ("HEAD", "OPTIONS"):
        return Reply(200, _cors(environ, method))
    try:
        inbound = from_environ(environ)
    except BodyTooLarge:
        return Reply(413)
    if handshake := _handshake(environ, inbound):
        return handshake
    try:
        accepted = services.accept_delivery(automation_id=automation_id, incoming=inbound)
    except AutomationGone:  # deleted since its key was remembered
        selectors.forget_hook_key(key)
        return Reply(404)
    # SPEC 4.2: 200 with an empty body, sent only after the row is committed.
    return Reply(200, [(DELIVERY_HEADER, str(accepted.public_id)), *_cors(environ, method)])


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
