"""Fuzz: hostile bodies and arguments at /mcp get an answer of the protocol, never a 500 or an internal error.

NUL bytes, lone surrogates, NaN and Infinity, nesting past any parser's
limit, ids of every type and size, and arbitrary arguments to every tool.
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_types.jsonrpc import INTERNAL_ERROR

from mcp_auth.tests.conftest import Mcp
from mcp_server.tools import registry

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**18, max_value=10**300),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=30),
    st.sampled_from(["\x00", "\ud800", "a\udfffb", "\u2028", "%00", "{{trigger.body}}", "'; drop table x; --"]),
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
methods = st.one_of(
    st.sampled_from(["initialize", "ping", "tools/list", "tools/call", "server/discover", "notifications/initialized"]),
    st.text(max_size=20),
)


def deep(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


RAW_BODIES = [
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}',
    b'{"jsonrpc": "2.0", "id": Infinity, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": 1e999, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping\\u0000"}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\x00',
    b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": ' + b"9" * 4000 + b', "method": "ping"}',
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + deep(100000) + "}").encode(),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"a": ' + deep(150) + "}}").encode(),
    b"\xef\xbb\xbf{}",
    b"\xc3\x28",
    b"[]",
    b"null",
]


def assert_protocol_answer(response):
    assert response.status_code in (200, 202, 400, 403, 404, 413), response.status_code
    if response.status_code == 202:
        return
    answer = json.loads(response.content)
    if "error" in answer and isinstance(answer["error"], dict):
        assert answer["error"]["code"] != INTERNAL_ERROR, answer


@pytest.mark.parametrize("body", RAW_BODIES, ids=range(len(RAW_BODIES)))
def test_hostile_raw_bodies_get_a_protocol_answer(mcp, body):
    assert_protocol_answer(mcp.post(body))


@FUZZ
@given(body=st.binary(max_size=200))
def test_any_bytes_get_a_protocol_answer(client, token, body):
    assert_protocol_answer(Mcp(client, token).post(body))


@FUZZ
@given(request_id=values, method=methods, params=values, modern=st.booleans())
def test_any_message_shape_gets_a_protocol_answer(client, token, request_id, method, params, modern):
    mcp = Mcp(client, token, modern=modern)
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    body = json.dumps(message, allow_nan=False).encode("utf-8", "surrogatepass")
    assert_protocol_answer(mcp.post(body, mcp.headers(method if isinstance(method, str) else None)))


ARGUMENT_NAMES = ["automation_id", "payload", "query", "limit", "name", "definition", "enabled", "delivery_id"]
arguments_of_tools = st.one_of(values, st.dictionaries(st.sampled_from(ARGUMENT_NAMES), values, max_size=5))


@FUZZ
@given(tool=st.sampled_from(sorted(registry())), arguments=arguments_of_tools, own=st.booleans())
def test_any_arguments_to_any_tool_get_a_tool_answer(client, token, make_automation, tool, arguments, own):
    """With own, the arguments name a real automation of the user's, so the tools get past the lookup."""
    if own and isinstance(arguments, dict):
        arguments["automation_id"] = str(make_automation(name="fuzzed").uuid)
    response = Mcp(client, token).request("tools/call", {"name": tool, "arguments": arguments})
    assert_protocol_answer(response)
