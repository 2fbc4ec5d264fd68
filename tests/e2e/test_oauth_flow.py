"""The OAuth flow of an MCP client against gunicorn, through the real pages: register, sign in and consent,
exchange the code, refresh, replay a rotated token, revoke. The MCP endpoint itself is not involved."""

import re
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from mcp_auth.tests.conftest import grant_mcp_tools, pkce_pair
from tests.e2e.stack import END_TO_END, Stack

pytestmark = END_TO_END

CALLBACK = "http://127.0.0.1:33418/callback"


@pytest.fixture
def web(tmp_path):
    stack = Stack(tmp_path)
    stack.start_web()
    yield stack
    stack.stop()


def csrf_token(page: httpx.Response) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]


def hidden_fields(page: httpx.Response) -> dict:
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))


def test_an_mcp_client_connects_refreshes_and_is_revoked(web, owner):
    grant_mcp_tools(owner)
    metadata = httpx.get(f"{web.base}/.well-known/oauth-authorization-server").json()
    assert metadata["issuer"] == web.base
    registered = httpx.post(
        metadata["registration_endpoint"],
        json={"client_name": "Flow test", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"},
    ).json()
    verifier, challenge = pkce_pair()
    query = urlencode(
        {
            "response_type": "code",
            "client_id": registered["client_id"],
            "redirect_uri": CALLBACK,
            "scope": "mcp:tools offline_access",
            "state": "xyz",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": f"{web.base}/mcp",
        }
    )
    with httpx.Client(base_url=web.base) as browser:
        to_login = browser.get(f"/oauth/login?{query}")
        assert to_login.status_code == 302 and to_login.headers["location"].startswith("/login?next=")
        login_page = browser.get(to_login.headers["location"])
        signed_in = browser.post(
            "/login",
            data={
                "username": "owner",
                "password": "pw-owner-123",
                "next": parse_qs(urlsplit(to_login.headers["location"]).query)["next"][0],
                "csrfmiddlewaretoken": csrf_token(login_page),
            },
            headers={"Origin": web.base},
        )
        assert signed_in.status_code == 302
        consent = browser.get(signed_in.headers["location"])
        assert consent.status_code == 200 and "Flow test" in consent.text
        answered = browser.post(
            "/oauth/login", data={**hidden_fields(consent), "allow": "on"}, headers={"Origin": web.base}
        )
    assert answered.status_code == 302
    callback = parse_qs(urlsplit(answered.headers["location"]).query)
    assert callback["state"] == ["xyz"]

    token_endpoint = metadata["token_endpoint"]
    first = httpx.post(
        token_endpoint,
        data={
            "grant_type": "authorization_code",
            "code": callback["code"][0],
            "redirect_uri": CALLBACK,
            "client_id": registered["client_id"],
            "code_verifier": verifier,
            "resource": f"{web.base}/mcp",
        },
    )
    assert first.status_code == 200, first.text
    assert first.json()["scope"] == "mcp:tools"

    renew = {"grant_type": "refresh_token", "client_id": registered["client_id"]}
    second = httpx.post(token_endpoint, data={**renew, "refresh_token": first.json()["refresh_token"]})
    assert second.status_code == 200, second.text
    third = httpx.post(token_endpoint, data={**renew, "refresh_token": second.json()["refresh_token"]})
    assert third.status_code == 200

    revoked = httpx.post(
        metadata["revocation_endpoint"],
        data={"token": third.json()["refresh_token"], "client_id": registered["client_id"]},
    )
    assert revoked.status_code == 200
    after = httpx.post(token_endpoint, data={**renew, "refresh_token": third.json()["refresh_token"]})
    assert after.status_code == 400 and after.json()["error"] == "invalid_grant"
    replay = httpx.post(token_endpoint, data={**renew, "refresh_token": first.json()["refresh_token"]})
    assert replay.json()["error"] == "invalid_grant"
