"""/account/agents in Chromium at a phone's width, against gunicorn: an agent connected through the consent page is
listed, and disconnecting it refuses its token at once on the MCP endpoint, whichever web process remembered it."""

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END, Stack
from tests.e2e.test_oauth_in_browser import CALLBACK, authorization_url, catch_callback

pytestmark = END_TO_END

PASSWORD = "pw-agent-owner-123"


@pytest.fixture
def web(tmp_path, browser):
    stack = Stack(tmp_path)
    stack.start_web()  # two web processes (tests/e2e/stack.py), each with its memory of checked tokens
    yield stack
    stack.stop()


def sign_in(page, username: str) -> None:
    page.raw.locator("#id_username").fill(username)
    page.raw.locator("#id_password").fill(PASSWORD)
    page.raw.locator("main form button[type=submit]").click()


def list_tools(web, token: str) -> httpx.Response:
    """tools/list on a new connection each time, so that the two web processes both answer some."""
    with httpx.Client() as client:
        return client.post(
            f"{web.base}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-06-18"},
        )


def test_a_person_sees_the_agent_they_connected_and_disconnects_it_at_once(web, phone_page, django_user_model):
    from mcp_auth.tests.tokens import grant_mcp_tools

    person = django_user_model.objects.create_user("ada", "ada@example.com", PASSWORD)
    grant_mcp_tools(person)
    url, verifier = authorization_url(web, name="Claude Code")
    received = catch_callback(phone_page)

    phone_page.open(url, "sign-in")
    sign_in(phone_page, "ada")
    phone_page.check("consent")
    link = phone_page.raw.get_by_role("link", name="Connected agents")
    assert link.get_attribute("href") == "/account/agents"
    phone_page.raw.get_by_role("button", name="Allow").click()
    phone_page.raw.wait_for_url(f"{CALLBACK}**")
    token = httpx.post(
        f"{web.base}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": received[0]["code"],
            "redirect_uri": CALLBACK,
            "client_id": parse_qs(urlsplit(url).query)["client_id"][0],
            "code_verifier": verifier,
        },
    ).json()
    for _ in range(6):  # checked, then remembered for MCP_TOKEN_CHECK_SECONDS by the processes that answered
        assert list_tools(web, token["access_token"]).status_code == 200

    phone_page.open(f"{web.base}/account/agents", "agents")
    assert_fits_the_screen(phone_page)
    agent = phone_page.raw.locator(".item")
    assert agent.count() == 1
    assert agent.get_by_role("heading", name="Claude Code").is_visible()
    assert agent.get_by_text("Run and inspect your automations").is_visible()
    assert agent.get_by_text("Create and change your automations").is_visible()
    assert agent.locator(".consent__host").inner_text() == "127.0.0.1"
    assert agent.locator("time").count() == 2  # connected, and last used by the calls above

    agent.get_by_role("button", name="Disconnect").click()
    phone_page.raw.wait_for_load_state("load")
    refused = list_tools(web, token["access_token"])
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
    phone_page.check("disconnected")
    assert_fits_the_screen(phone_page)
    assert phone_page.raw.get_by_role("status").get_by_text("Claude Code is disconnected").is_visible()
    assert phone_page.raw.get_by_text("No agent is connected.").is_visible()
    for _ in range(6):
        assert list_tools(web, token["access_token"]).status_code == 401
    again = httpx.post(
        f"{web.base}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": token["refresh_token"],
            "client_id": parse_qs(urlsplit(url).query)["client_id"][0],
        },
    )
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
