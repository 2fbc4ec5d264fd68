"""Personas of the MCP suites: an agent user holding "MCP Tools" and a token, and a helper that POSTs messages."""

import json

import pytest
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from mcp_auth.tests.tokens import ALL_SCOPES, grant_mcp_tools, issue_token


@pytest.fixture
def agent_user(owner):
    """The owner persona, allowed to connect agents."""
    grant_mcp_tools(owner)
    return owner


@pytest.fixture
def token(agent_user):
    """A valid token of the agent user with both scopes."""
    return issue_token(agent_user, scope=ALL_SCOPES)[0]


def modern_meta() -> dict:
    return {
        "io.modelcontextprotocol/protocolVersion": LATEST_MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    }


class Mcp:
    """POSTs JSON-RPC messages to /mcp through Django's test client, in the handshake era or the new one."""

    def __init__(self, client, token: str | None, *, modern: bool = False):
        self.client, self.token, self.modern = client, token, modern
        self.next_id = 0

    def headers(self, method: str | None = None, name: str | None = None, **extra) -> dict:
        headers = {"Accept": "application/json, text/event-stream"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.modern:
            headers["MCP-Protocol-Version"] = LATEST_MODERN_VERSION
            if method:
                headers["Mcp-Method"] = method
            if name:
                headers["Mcp-Name"] = name
        elif method != "initialize":
            headers["MCP-Protocol-Version"] = LATEST_HANDSHAKE_VERSION
        headers.update(extra)
        return headers

    def post(self, body, headers: dict | None = None, path: str = "/mcp"):
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        return self.client.post(path, data=data, content_type="application/json", headers=headers or self.headers())

    def request(self, method: str, params: dict | None = None, **extra):
        self.next_id += 1
        params = dict(params or {})
        if self.modern:
            params["_meta"] = {**modern_meta(), **params.get("_meta", {})}
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params or self.modern:
            message["params"] = params
        return self.post(message, self.headers(method, (params or {}).get("name"), **extra))

    def call(self, tool: str, arguments: dict | None = None):
        """tools/call; returns the result (asserting a 200 JSON-RPC success)."""
        response = self.request("tools/call", {"name": tool, "arguments": arguments or {}})
        assert response.status_code == 200, response.content
        return response.json()["result"]


@pytest.fixture
def mcp(client, token):
    return Mcp(client, token)


@pytest.fixture
def modern_mcp(client, token):
    return Mcp(client, token, modern=True)
