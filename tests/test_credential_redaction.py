"""edge.redaction: no OAuth credential sent in a query string survives in text, however the URL spelled it."""

from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from edge.redaction import CREDENTIALS, PLACEHOLDER, redact, redact_credentials

# Tokens, codes, verifiers and secrets are unreserved characters (RFC 6749 A.12, RFC 7636 4.1), 8 or more of them.
values = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~", min_size=8, max_size=64)
names = st.sampled_from(CREDENTIALS)


@st.composite
def spellings(draw, name: str) -> str:
    """name with each character as itself, in another case, or percent-encoded, as a server would still read it."""
    return "".join(
        draw(st.sampled_from([char, char.upper(), f"%{ord(char):02X}", f"%{ord(char):02x}"])) for char in name
    )


@given(names.flatmap(spellings), values, st.sampled_from(["?", "&", "&amp;", "%3F", "%26", " "]))
def test_a_credential_value_never_survives(name, value, before):
    """After ?, &, their encodings, or at the start of a word (a query string logged alone)."""
    equals = "%3D" if before.startswith("%") else "="
    redacted = redact(f'"GET /mcp?x=1{before}{name}{equals}{value}&y=2 HTTP/1.1" 400')
    assert value not in redacted
    assert f"{name}{equals}{PLACEHOLDER}&y=2" in redacted


@given(names, values)
def test_a_query_string_inside_another_url_is_redacted_too(name, value):
    referer = "https://app.example/cb?next=" + quote(f"/back?{name}={value}&state=s", safe="")
    assert value not in redact_credentials(referer)


@given(st.sampled_from(["zip", "error_", "x", "my"]), names, values)
def test_a_parameter_that_only_ends_like_one_is_left_alone(prefix, name, value):
    text = f"/page?{prefix}{name}={value}"
    assert redact_credentials(text) == text
