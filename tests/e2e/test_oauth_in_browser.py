"""The authorization server's pages in Chromium against gunicorn: sign-in, consent, refusal, at desktop and phone width.

The client's callback (a loopback URL an editor would listen on) is answered
by the browser itself (playwright's route), which records the query it got.
"""

from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from mcp_auth.tests.conftest import grant_mcp_tools, pkce_pair
from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END

pytestmark = END_TO_END

CALLBACK = "http://127.0.0.1:33418/callback"


def authorization_url(web, name: str = "Claude Code") -> tuple[str, str]:
    registered = httpx.post(
        f"{web.base}/oauth/client",
        json={"client_name": name, "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"},
    )
    assert registered.status_code == 201, registered.text
    verifier, challenge = pkce_pair()
    query = {
        "response_type": "code",
        "client_id": registered.json()["client_id"],
        "redirect_uri": CALLBACK,
        "scope": "mcp:tools mcp:automation_builder",
        "state": "s-42",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": f"{web.base}/mcp",
    }
    return f"{web.base}/oauth/login?{urlencode(query)}", verifier


def catch_callback(page) -> list[dict]:
    """Answer the client's loopback callback in the browser; returns the list its queries are appended to."""
    received: list[dict] = []

    def fulfil(route):
        received.append({key: values[0] for key, values in parse_qs(urlsplit(route.request.url).query).items()})
        route.fulfill(status=200, content_type="text/html", body="<!doctype html><html lang=en><title>ok</title>")

    page.raw.route(f"{CALLBACK}**", fulfil)
    return received


def sign_in(page, password: str) -> None:
    page.raw.locator("#id_username").fill("owner")
    page.raw.locator("#id_password").fill(password)
    page.raw.locator("main form button[type=submit]").click()


def test_a_signed_out_user_signs_in_reads_the_consent_page_and_allows(web, page, owner):
    grant_mcp_tools(owner)
    url, verifier = authorization_url(web)
    received = catch_callback(page)

    page.open(url, "signed-out-goes-to-sign-in")
    assert urlsplit(page.raw.url).path == "/login"
    sign_in(page, "pw-owner-123")
    page.check("consent")
    assert page.raw.url == url
    assert page.raw.get_by_role("heading", name="Connect an AI client").is_visible()
    assert page.raw.get_by_text("Claude Code asks to use Flowgate as you (owner).").is_visible()
    assert page.raw.locator(".consent__host").inner_text() == "127.0.0.1"
    assert page.raw.get_by_text("Create and change your automations").is_visible()

    page.raw.get_by_role("button", name="Allow").click()
    page.raw.wait_for_url(f"{CALLBACK}**")
    assert received and received[0]["state"] == "s-42" and received[0]["code"]
    token = httpx.post(
        f"{web.base}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": received[0]["code"],
            "redirect_uri": CALLBACK,
            "client_id": parse_qs(urlsplit(url).query)["client_id"][0],
            "code_verifier": verifier,
        },
    )
    assert token.status_code == 200, token.text
    assert token.json()["scope"] == "mcp:tools mcp:automation_builder"


def test_deny_sends_access_denied_to_the_client(web, page, owner):
    grant_mcp_tools(owner)
    url, _ = authorization_url(web)
    received = catch_callback(page)
    page.open(url, "sign-in")
    sign_in(page, "pw-owner-123")
    page.check("consent")
    page.raw.get_by_role("button", name="Deny").click()
    page.raw.wait_for_url(f"{CALLBACK}**")
    assert received == [{"error": "access_denied", "state": "s-42"}]


def test_a_user_without_mcp_tools_sees_the_refusal_and_returns_the_client_a_denial(web, page, owner):
    url, _ = authorization_url(web, name="Cursor")
    received = catch_callback(page)
    page.open(url, "sign-in")
    sign_in(page, "pw-owner-123")
    page.check("refusal")
    assert page.raw.get_by_role("heading", name="You cannot connect AI clients").is_visible()
    assert page.raw.get_by_role("alert").get_by_text("MCP Tools").is_visible()
    assert page.raw.get_by_role("button", name="Allow").count() == 0
    page.raw.get_by_role("button", name="Return to Cursor").click()
    page.raw.wait_for_url(f"{CALLBACK}**")
    assert received == [{"error": "access_denied", "state": "s-42"}]


def test_an_unusable_request_shows_a_page_and_sends_the_browser_nowhere(web, page, owner):
    grant_mcp_tools(owner)
    url, _ = authorization_url(web)
    page.open(url.replace("redirect_uri=http", "redirect_uri=https"), "sign-in")
    sign_in(page, "pw-owner-123")
    page.check("unusable-request")
    assert page.raw.get_by_role("heading", name="This connection request cannot be used").is_visible()
    assert urlsplit(page.raw.url).path == "/oauth/login"


def test_the_consent_page_fits_a_phone_and_speaks_german(web, phone_page, owner):
    grant_mcp_tools(owner)
    phone_page.raw.context.set_extra_http_headers({"Accept-Language": "de-DE,de;q=0.9"})
    url, _ = authorization_url(web)
    phone_page.open(url, "anmelden")
    sign_in(phone_page, "pw-owner-123")
    phone_page.check("zustimmung")
    assert phone_page.raw.get_by_role("heading", name="KI-Client verbinden").is_visible()
    assert phone_page.raw.get_by_role("button", name="Erlauben").is_visible()
    assert_fits_the_screen(phone_page)
