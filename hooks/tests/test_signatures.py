"""The signature schemes as plain functions (hooks/signatures.py): the published examples verify, and the header
parsers refuse, never raise otherwise, whatever the headers hold."""

import base64
import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hooks import signatures
from hooks.signatures import Check, Refused

# Any text a server can hand over as a header (latin-1 decoded bytes), and some that it cannot.
header_text = st.one_of(st.none(), st.text(), st.text(alphabet=st.characters(max_codepoint=255)))
near_standard = st.builds(
    lambda version, sep, payload: f"{version}{sep}{payload}",
    st.sampled_from(["v1", "v1a", "v2", "", "V1"]),
    st.sampled_from([",", "", ", ", "="]),
    st.one_of(st.text(), st.binary(max_size=40).map(lambda raw: base64.b64encode(raw).decode())),
)
near_stripe = st.lists(
    st.builds(
        lambda name, value: f"{name}={value}",
        st.sampled_from(["t", "v1", "v0", "T", ""]),
        st.one_of(st.text(), st.integers().map(str), st.binary(max_size=40).map(bytes.hex)),
    ),
    max_size=6,
).map(",".join)


def test_the_standard_webhooks_example_verifies():
    """The example of the Standard Webhooks specification's reference libraries."""
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"test": 2432232314}'
    headers = {
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    }
    check = Check(scheme=signatures.STANDARD, keys=(signatures.standard_key(secret),))
    assert signatures.verify(check, headers, body, "", now=1614265330 + 10)
    assert signatures.sign_standard(secret, headers["webhook-id"], 1614265330, body) == headers["webhook-signature"]


def test_a_stripe_signature_is_an_hmac_of_the_time_and_the_body_under_the_whole_secret():
    secret, body = "whsec_abc123", b'{"id": "evt_1"}'
    expected = hmac.new(secret.encode(), b"1700000000." + body, hashlib.sha256).hexdigest()
    assert signatures.sign_stripe(secret, 1700000000, body) == f"t=1700000000,v1={expected}"
    check = Check(scheme=signatures.STRIPE, keys=(secret.encode(),))
    digest = hashlib.sha256(body).hexdigest()
    headers = {"stripe-signature": f"t=1700000000,v1={expected}"}
    assert signatures.verify(check, headers, body, digest, now=1700000000)


def test_a_replay_id_depends_on_the_url_scheme_and_id_only():
    check = Check(scheme=signatures.STANDARD, keys=(b"k" * 32,))
    at, body = 1700000000, b"{}"
    secret = "whsec_" + base64.b64encode(b"k" * 32).decode()

    def replay_id(webhook_id, when):
        headers = {
            "webhook-id": webhook_id,
            "webhook-timestamp": str(when),
            "webhook-signature": signatures.sign_standard(secret, webhook_id, when, body),
        }
        return signatures.verify(check, headers, body, "", now=when)

    assert replay_id("msg_1", at) == replay_id("msg_1", at + 5) != replay_id("msg_2", at)


@pytest.mark.parametrize("secret", ["", "whsec_", "whsec_not base64!", "whsec_" + base64.b64encode(b"short").decode()])
def test_a_standard_webhooks_secret_must_be_base64_of_at_least_16_bytes(secret):
    with pytest.raises(ValueError):
        signatures.standard_key(secret)


@pytest.mark.parametrize(
    ("address", "allowed"),
    [("192.0.2.7", True), ("::ffff:192.0.2.7", True), ("2001:db8::5", True), ("198.51.100.1", False), ("", False)],
)
def test_the_allow_list_takes_v4_v6_and_v4_mapped_addresses(address, allowed):
    import ipaddress

    check = Check(
        scheme="", keys=(), networks=(ipaddress.ip_network("192.0.2.0/24"), ipaddress.ip_network("2001:db8::/32"))
    )
    assert signatures.allowed(check, address) is allowed


@given(webhook_id=header_text, timestamp=header_text, signature=st.one_of(header_text, near_standard))
def test_the_standard_webhooks_parser_only_ever_refuses(webhook_id, timestamp, signature):
    try:
        webhook_id_bytes, at, found = signatures.parse_standard(webhook_id, timestamp, signature)
    except Refused as refusal:
        assert refusal.reason == signatures.MALFORMED
        return
    assert isinstance(webhook_id_bytes, bytes) and isinstance(at, int) and all(len(s) == 32 for s in found)


@given(signature=st.one_of(header_text, st.binary(max_size=40).map(lambda raw: "sha256=" + raw.hex())))
def test_the_github_parser_only_ever_refuses(signature):
    try:
        assert len(signatures.parse_github(signature)) == 32
    except Refused as refusal:
        assert refusal.reason == signatures.MALFORMED


@given(signature=st.one_of(header_text, near_stripe))
def test_the_stripe_parser_only_ever_refuses(signature):
    try:
        at, found = signatures.parse_stripe(signature)
    except Refused as refusal:
        assert refusal.reason == signatures.MALFORMED
        return
    assert at >= 0 and all(len(s) == 32 for s in found)


@given(
    scheme=st.sampled_from(signatures.SCHEMES),
    headers=st.dictionaries(
        st.sampled_from(
            ["webhook-id", "webhook-timestamp", "webhook-signature", "x-hub-signature-256", "stripe-signature"]
        ),
        st.one_of(st.text(), near_standard, near_stripe),
    ),
    body=st.binary(max_size=200),
)
def test_verify_only_ever_refuses_or_accepts(scheme, headers, body):
    check = Check(scheme=scheme, keys=(b"k" * 32, b"old"), tolerance=300)
    try:
        signatures.verify(check, headers, body, hashlib.sha256(body).hexdigest(), now=1700000000)
    except Refused as refusal:
        assert refusal.status_code == 401
