"""What webhook and web service URLs answer (SPEC 4.2, 7.2, 7.3), as plain functions of the request: no I/O.

The hooks process's handler (hooks/asgi.py) asks them for webhooks, and
Django's web service view (hooks/views.py) for the replies and CORS they share.
"""

import json

from edge import json_bodies
from edge.outages import RETRY_AFTER_SECONDS
from edge.replies import Reply
from hooks import signatures

HOOK_METHODS = ("GET", "POST", "PUT", "HEAD", "OPTIONS")
WEB_SERVICE_METHODS = "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"
DELIVERY_HEADER = "X-Flowgate-Delivery-Id"
# A body declared larger than this, or chunked, is read only after its key is looked up afresh. A key
# remembered from before its automation was deleted would otherwise cost reading the whole body (26 MB took
# half a second) before the insert failed, where a miss costs one lookup; a smaller body costs about as much
# to read as the failed insert that answers 404.
FRESH_LOOKUP_ABOVE_BYTES = 64 * 1024
ANY_ORIGIN = ("Access-Control-Allow-Origin", "*")


MAINTENANCE = Reply(503)
# The database out of reach (edge/outages.py): nothing was stored, so the sender is asked to send it again.
DATABASE_UNAVAILABLE = Reply(503, (("Retry-After", str(RETRY_AFTER_SECONDS)),))
MISS = Reply(404)  # every miss alike: unknown, altered, malformed, deleted
FAILED = Reply(500)
WRONG_METHOD = Reply(405, (("Allow", ", ".join(HOOK_METHODS)),))


def cors(method: str, requested_headers: str | None, allowed_methods: str) -> tuple[tuple[str, str], ...]:
    """The CORS headers of every answer; a preflight (OPTIONS) also gets the methods and headers it asked about."""
    if method != "OPTIONS":
        return (ANY_ORIGIN,)
    headers = (ANY_ORIGIN, ("Access-Control-Allow-Methods", allowed_methods), ("Access-Control-Max-Age", "86400"))
    return headers + (("Access-Control-Allow-Headers", requested_headers[:1000]),) if requested_headers else headers


def reads_body(method: str) -> bool:
    return method not in ("HEAD", "OPTIONS")


def fresh_lookup(method: str, declared: int | None) -> bool:
    """Whether the key is looked up afresh, not from memory: before a large or chunked body is read."""
    return reads_body(method) and (declared is None or declared > FRESH_LOOKUP_ABOVE_BYTES)


def without_body(method: str, requested_headers: str | None) -> Reply:
    """HEAD and OPTIONS (a CORS preflight) to a key that exists: 200, nothing stored."""
    return Reply(200, cors(method, requested_headers, ", ".join(HOOK_METHODS)))


def handshake(hook_secret: str | None, body: bytes) -> Reply | None:
    """The verification handshakes of SPEC 4.2, answered without a run: X-Hook-Secret and {"challenge": ...}.

    A body that cannot be read as JSON (too deep for the parser, say), or
    whose challenge cannot be echoed as strict JSON (NaN, Infinity, 1e999, a
    lone surrogate), is not a handshake: it is an ordinary delivery.
    """
    if hook_secret is not None:
        return Reply(200, (("X-Hook-Secret", hook_secret), ANY_ORIGIN))
    # Only a body that may name the field, plainly or escaped ({"\u0063hallenge": ...}), costs a parse.
    if len(body) >= 64 * 1024 or (b"challenge" not in body and b"\\u" not in body):
        return None
    try:
        document = json_bodies.parse(body)  # the one parser: NaN, the infinities and deep nesting are no JSON
        if not isinstance(document, dict) or list(document) != ["challenge"]:
            return None
        echo = json.dumps(document, ensure_ascii=False).encode()  # encoding the text refuses lone surrogates
    except ValueError:
        return None
    return Reply(200, (ANY_ORIGIN,), echo, "application/json")


# What a sender is told of a refusal (docs/webhooks.md, "Verified webhook URLs"): the reason its owner sees, in
# English; the signature is checked before the time, so telling one from the other gives away no secret.
REFUSALS = {
    signatures.SIGNATURE: b"signature did not match\n",
    signatures.MALFORMED: b"signature headers missing or malformed\n",
    signatures.TIMESTAMP: b"timestamp outside tolerance\n",
    signatures.REPLAYED: b"webhook-id already seen\n",
    signatures.ADDRESS: b"address not allowed\n",
    signatures.UNREADABLE: b"signature could not be checked\n",
}


def refused(refusal: signatures.Refused) -> Reply:
    """401 for a signature refused, 403 for an address: nothing stored, no run."""
    return Reply(refusal.status_code, (ANY_ORIGIN,), REFUSALS[refusal.reason], "text/plain; charset=utf-8")


def accepted(public_id) -> Reply:
    """SPEC 4.2: 200 with an empty body, sent only once the delivery's row is committed."""
    return Reply(
        200, ((DELIVERY_HEADER, str(public_id)), ANY_ORIGIN, ("Access-Control-Expose-Headers", DELIVERY_HEADER))
    )
