"""Fixtures of the MCP and OAuth suites: a registered client, a user who may approve, the OAuth round trip; an agent
user holding "MCP Tools" and a token made in the database, and a helper that POSTs messages to /mcp."""

import base64
import hashlib
import importlib
import json
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.apps import apps as django_apps
from django.test import Client
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from mcp_auth.tests.tokens import ALL_SCOPES, grant_mcp_tools, issue_token

REDIRECT = "http://127.0.0.1:33418/callback"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register(client: Client, **metadata) -> dict:
    document = {"client_name": "Test Agent", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    document.update(metadata)
    response = client.post("/oauth/client", json.dumps(document), content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()


@dataclass
class Flow:
    """One client's authorization request: its parameters, and the verifier that goes with its challenge."""

    client_id: str
    verifier: str
    params: dict
    secret: str | None = None

    @property
    def url(self) -> str:
        return "/oauth/login?" + urlencode(self.params, doseq=True)


def start_flow(registered: dict, *, resource="http://testserver/mcp", **overrides) -> Flow:
    verifier, challenge = pkce_pair()
    params = {
        "response_type": "code",
        "client_id": registered["client_id"],
        "redirect_uri": registered["redirect_uris"][0],
        "scope": "mcp:tools",
        "state": "state-123",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if resource is not None:
        params["resource"] = resource
    params.update(overrides)
    params = {key: value for key, value in params.items() if value is not None}
    return Flow(registered["client_id"], verifier, params, registered.get("client_secret"))


def answer(client: Client, flow: Flow, *, allow: bool = True, **changed):
    """Show the consent page, then send its form back (allow or deny), hidden fields changed as given."""
    page = client.get(flow.url)
    assert page.status_code in (200, 403), page.content
    form = page.context["form"]
    data = {name: form.initial.get(name) or "" for name in form.fields if name != "allow"}
    data.update(changed)
    if allow:
        data["allow"] = "on"
    return client.post("/oauth/login", data)


def redirect_params(response) -> dict:
    assert response.status_code == 302, response.content
    return {key: values[0] for key, values in parse_qs(urlsplit(response["Location"]).query).items()}


def code_for(client: Client, flow: Flow) -> str:
    params = redirect_params(answer(client, flow))
    assert params["state"] == "state-123", params
    return params["code"]


def exchange(client: Client, flow: Flow, code: str, **overrides):
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": flow.params["redirect_uri"],
        "client_id": flow.client_id,
        "code_verifier": flow.verifier,
    }
    if flow.secret:
        data["client_secret"] = flow.secret
    data.update(overrides)
    return client.post("/oauth/token", {key: value for key, value in data.items() if value is not None})


def refresh(client: Client, flow: Flow, refresh_token: str, **overrides):
    data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": flow.client_id}
    if flow.secret:
        data["client_secret"] = flow.secret
    data.update(overrides)
    return client.post("/oauth/token", data)


@pytest.fixture
def approver(owner):
    """The owner persona, granted "MCP Tools" by staff."""
    grant_mcp_tools(owner)
    return owner


@pytest.fixture
def signed_in(client, approver):
    client.force_login(approver)
    return client


@pytest.fixture
def agent(db):
    """A public client (token_endpoint_auth_method none) registered through the endpoint, as MCP clients do."""
    return register(Client())


@pytest.fixture
def tokens(signed_in, agent):
    """A finished round trip: (flow, token response body)."""
    flow = start_flow(agent)
    response = exchange(signed_in, flow, code_for(signed_in, flow))
    assert response.status_code == 200, response.content
    return flow, response.json()


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


@pytest.fixture
def cursor_callback(db) -> str:
    """Cursor's callback, listed the way migration 0003 lists it.

    Listed again here: the tables of a test database are emptied by every
    transactional test, and under make test one may have run before in the
    same test process (each file runs whole in one of several processes).
    """
    migration = importlib.import_module("mcp_auth.migrations.0003_cursor_callback")
    migration.add(django_apps, None)
    return migration.CURSOR
