"""Signed webhooks: the Standard Webhooks, GitHub and Stripe schemes, and the address allow list, as plain functions.

No I/O: hooks/asgi.py asks them about a request it has read, with the Check
that hooks/verification.py loaded for its URL (docs/webhooks.md, "Verified
webhook URLs"). Each parser and verify() raise nothing but Refused, whatever
bytes the headers and the body hold. Signatures are checked over the exact
bytes received, before anything parses them.
"""

import base64
import hashlib
import hmac
import ipaddress
from dataclasses import dataclass, field

from django.views.decorators.debug import sensitive_variables

STANDARD, GITHUB, STRIPE = "standard", "github", "stripe"
SCHEMES = (STANDARD, GITHUB, STRIPE)

# Why a request was refused: the codes of hooks.models.Refusal.Reason.
SIGNATURE = "signature"  # no signature of ours matched
MALFORMED = "malformed"  # the scheme's headers are missing or cannot be read
TIMESTAMP = "timestamp"  # signed outside the tolerance
REPLAYED = "replayed"  # its webhook-id (or Stripe's signed time and body) was accepted before
ADDRESS = "address"  # the client's address is not in the allow list
UNREADABLE = "unreadable"  # the secret was sealed under another URL_KEY_SECRET

TIMESTAMP_DIGITS = 12  # seconds since 1970 for the next 30,000 years
STANDARD_PREFIX = "whsec_"


class Refused(Exception):
    """A request its URL's verification refuses: 403 for its address, 401 for anything about its signature."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
        self.status_code = 403 if reason == ADDRESS else 401


@dataclass(frozen=True, slots=True)
class Check:
    """What one webhook URL verifies: its scheme ("" for none), HMAC keys (current first), tolerance, allow list."""

    scheme: str
    keys: tuple[bytes, ...] = field(repr=False)  # never in a log line or an error report's locals
    tolerance: int = 300
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    unreadable: bool = False


def standard_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret (whsec_ and base64); ValueError if it is not one."""
    encoded = secret.strip().removeprefix(STANDARD_PREFIX)
    key = base64.b64decode(encoded, validate=True) if encoded.isascii() else b""
    if len(key) < 16:
        raise ValueError("not a Standard Webhooks secret")
    return key


def hmac_key(scheme: str, secret: str) -> bytes:
    """The HMAC key of a secret as its scheme reads it: Standard Webhooks decodes it, GitHub and Stripe take it whole
    (Stripe's whsec_ included)."""
    return standard_key(secret) if scheme == STANDARD else secret.encode()


def parse_standard(webhook_id: str | None, timestamp: str | None, signature: str | None):
    """(id as bytes, timestamp, [signatures]) from the webhook-id, webhook-timestamp and webhook-signature headers."""
    if not webhook_id or timestamp is None or signature is None:
        raise Refused(MALFORMED)
    try:
        id_bytes = webhook_id.encode("latin-1")  # the header's bytes as received (the server decoded them so)
    except UnicodeEncodeError:
        raise Refused(MALFORMED) from None
    signatures = []
    for entry in signature.split():
        version, comma, encoded = entry.partition(",")
        # Other versions (v1a: asymmetric) are not ours to check.
        if version == "v1" and comma and (decoded := _base64(encoded)) is not None:
            signatures.append(decoded)
    if not signatures:
        raise Refused(MALFORMED)
    return id_bytes, _timestamp(timestamp), signatures


def parse_github(signature: str | None) -> bytes:
    """The digest in X-Hub-Signature-256: sha256=<64 hex digits>."""
    if signature is None:
        raise Refused(MALFORMED)
    algorithm, equals, digits = signature.strip().partition("=")
    if algorithm != "sha256" or not equals or (digest := _hex(digits)) is None:
        raise Refused(MALFORMED)
    return digest


def parse_stripe(signature: str | None):
    """(timestamp, [signatures]) from Stripe-Signature: t=<seconds>,v1=<hex>[,v1=<hex>...]; other schemes ignored."""
    if signature is None:
        raise Refused(MALFORMED)
    times, signatures = [], []
    for item in signature.split(","):
        name, equals, value = item.strip().partition("=")
        if name == "t" and equals:
            times.append(value)
        elif name == "v1" and equals and (digest := _hex(value)) is not None:
            signatures.append(digest)
    if len(times) != 1 or not signatures:
        raise Refused(MALFORMED)
    return _timestamp(times[0]), signatures


@sensitive_variables()  # its locals hold the keys
def verify(check: Check, headers: dict[str, str], body: bytes, body_digest: str, *, now: float) -> str | None:
    """Refused, or the replay id the delivery is stored with (None when the scheme signs none).

    headers: by lower-case name. The replay id is a digest: of the
    webhook-id (Standard Webhooks), or of Stripe's signed time and the
    body's digest; the database refuses a second delivery with it
    (hooks/statements.py). GitHub signs neither a time nor an id: a replay
    of a signed body cannot be told from the sender's own redelivery.
    """
    if check.unreadable:
        raise Refused(UNREADABLE)
    if check.scheme == STANDARD:
        webhook_id, timestamp, signatures = parse_standard(
            headers.get("webhook-id"), headers.get("webhook-timestamp"), headers.get("webhook-signature")
        )
        prefix = b"%s.%d." % (webhook_id, timestamp)
        _match(check.keys, prefix, body, signatures)
        _in_time(timestamp, check.tolerance, now)
        return _replay_id(b"standard:" + webhook_id)
    if check.scheme == GITHUB:
        _match(check.keys, b"", body, [parse_github(headers.get("x-hub-signature-256"))])
        return None
    if check.scheme == STRIPE:
        timestamp, signatures = parse_stripe(headers.get("stripe-signature"))
        _match(check.keys, b"%d." % timestamp, body, signatures)
        _in_time(timestamp, check.tolerance, now)
        return _replay_id(b"stripe:%d:%s" % (timestamp, body_digest.encode()))
    return None


def allowed(check: Check, address: str) -> bool:
    """Whether the client's address is in the URL's allow list (an empty list allows every address)."""
    if not check.networks:
        return True
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return any(ip.version == network.version and ip in network for network in check.networks)


def sign_standard(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The webhook-signature header a Standard Webhooks sender writes (for tests, benchmarks and the docs)."""
    digest = hmac.new(standard_key(secret), b"%s.%d.%s" % (webhook_id.encode(), timestamp, body), hashlib.sha256)
    return "v1," + base64.b64encode(digest.digest()).decode()


def sign_github(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def sign_stripe(secret: str, timestamp: int, body: bytes) -> str:
    return f"t={timestamp},v1=" + hmac.new(secret.encode(), b"%d.%s" % (timestamp, body), hashlib.sha256).hexdigest()


@sensitive_variables()
def _match(keys: tuple[bytes, ...], prefix: bytes, body: bytes, signatures: list[bytes]) -> None:
    """Refused unless one of the signatures is the HMAC-SHA256 of prefix + body under one of the keys."""
    for key in keys:
        mac = hmac.new(key, prefix, hashlib.sha256)
        mac.update(body)  # not prefix + body: a body of up to HOOK_MAX_BODY_BYTES is not copied
        expected = mac.digest()
        # Every signature compared, in constant time each: which one matched is not told by the timing.
        if sum(hmac.compare_digest(expected, signature) for signature in signatures):
            return
    raise Refused(SIGNATURE)


def _in_time(timestamp: int, tolerance: int, now: float) -> None:
    if abs(now - timestamp) > tolerance:  # a future time too: it would stretch the window a replay has
        raise Refused(TIMESTAMP)


def _timestamp(text: str) -> int:
    text = text.strip()
    if not text.isascii() or not text.isdigit() or len(text) > TIMESTAMP_DIGITS:
        raise Refused(MALFORMED)
    return int(text)


def _base64(text: str) -> bytes | None:
    try:
        decoded = base64.b64decode(text, validate=True) if text.isascii() else None
    except ValueError:  # binascii.Error
        return None
    return decoded if decoded and len(decoded) == hashlib.sha256().digest_size else None


def _hex(text: str) -> bytes | None:
    text = text.strip()
    if len(text) != 64 or not text.isascii():
        return None
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def _replay_id(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()
