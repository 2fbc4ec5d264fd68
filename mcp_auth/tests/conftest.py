"""Fixtures of the authorization server suites: a registered client, a user who may approve, the OAuth round trip."""

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

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


def grant_mcp_tools(user) -> None:
    user.user_permissions.add(Permission.objects.get(codename="use_mcp_tools", content_type__app_label="mcp_auth"))


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
