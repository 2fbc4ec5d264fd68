"""An MCP client connects as a person would let it: the official SDK's OAuth client against gunicorn, a real
worker and beat, through the real sign-in and consent pages.

The SDK finds the protected-resource metadata from /mcp's 401, the
authorization server's metadata from it, registers itself, and runs the
authorization-code flow with PKCE; the person's part (sign in, allow) is
played on the real pages by an HTTP client that follows the authorization
URL the SDK hands over. The agent then uses every tool (a builder tool makes
it ask for the builder scope too), its token is refreshed, and a person
without "MCP Tools" is refused.
"""

import asyncio
import re
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauth2_provider.models import AccessToken

from conftest import app_doc
from mcp_auth.tests.tokens import grant_mcp_tools
from tests.e2e.stack import END_TO_END, Stack
from tests.e2e.test_mcp_end_to_end import RECORD, assert_every_tool_worked, session

pytestmark = END_TO_END

CALLBACK = "http://127.0.0.1:33418/callback"


@pytest.fixture
def stack(tmp_path):
    running = Stack(tmp_path, DELIVERY_SWEEP_SECONDS="1")
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


class Memory(TokenStorage):
    """Where the agent keeps its registration and tokens."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class Person:
    """Plays the person at the browser: follows the authorization URL, signs in and answers the consent page."""

    def __init__(self, base: str, username: str, password: str):
        self.base, self.username, self.password = base, username, password
        self.pages: list[httpx.Response] = []
        self.callback: dict[str, str] = {}

    async def open(self, authorization_url: str) -> None:
        with httpx.Client(base_url=self.base) as browser:
            to_login = browser.get(authorization_url)
            assert to_login.status_code == 302 and to_login.headers["location"].startswith("/login?next=")
            login = browser.get(to_login.headers["location"])
            next_url = parse_qs(urlsplit(to_login.headers["location"]).query)["next"][0]
            signed_in = browser.post(
                "/login",
                data={"username": self.username, "password": self.password, "next": next_url, **_csrf(login)},
                headers={"Origin": self.base},
            )
            assert signed_in.status_code == 302, signed_in.text
            page = browser.get(signed_in.headers["location"])
            self.pages.append(page)
            # Allow on the consent page; on the refusal page the one button goes back to the client.
            answered = browser.post(
                "/oauth/login", data={**_hidden(page), "allow": "on"}, headers={"Origin": self.base}
            )
        assert answered.status_code == 302, answered.text
        location = answered.headers["location"]
        assert location.startswith(CALLBACK + "?"), location
        self.callback = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}

    async def code(self) -> AuthorizationCodeResult:
        if "code" not in self.callback:
            raise PermissionError(self.callback.get("error", "no code"))
        return AuthorizationCodeResult(code=self.callback["code"], state=self.callback.get("state"))


def _csrf(page: httpx.Response) -> dict:
    return {"csrfmiddlewaretoken": re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]}


def _hidden(page: httpx.Response) -> dict:
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))


def agent(stack, person: Person, storage: Memory) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=stack.base + "/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="SDK agent",
            redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            scope="mcp:tools mcp:automation_builder",
        ),
        storage=storage,
        redirect_handler=person.open,
        callback_handler=person.code,
    )


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_an_agent_signs_in_through_the_pages_uses_every_tool_and_refreshes_its_token(
    stack, make_catalog, make_automation, owner, mode
):
    make_catalog(app_doc("acme-crm", name="Acme CRM"))
    automation = make_automation(RECORD)
    grant_mcp_tools(owner)
    person, storage = Person(stack.base, "owner", "pw-owner-123"), Memory()
    provider = agent(stack, person, storage)

    seen = asyncio.run(session(stack, create_mcp_http_client(auth=provider), mode))

    assert_every_tool_worked(seen, stack, automation, mode)
    assert storage.client_info.client_id and storage.client_info.client_secret is None  # a public client
    # The 401 asks for mcp:tools only; the first builder call's 403 names both scopes, and the SDK asks the
    # person again for exactly those (step-up authorization): two consent pages, each naming the client.
    first_consent, step_up = person.pages
    assert "SDK agent" in first_consent.text and "SDK agent" in step_up.text
    assert "Create and change your automations" not in first_consent.text
    assert "Create and change your automations" in step_up.text
    token = AccessToken.objects.filter(user=owner).latest("created")
    assert token.resource == [stack.base + "/mcp"]
    assert set(token.scope.split()) == {"mcp:tools", "mcp:automation_builder"}
    first = storage.tokens

    # An hour later, as the agent sees it: its next call refreshes the token first, with no person involved.
    provider.context.token_expiry_time = time.time() - 1

    async def list_again():
        http = create_mcp_http_client(auth=provider)
        async with http, Client(streamable_http_client(stack.base + "/mcp", http_client=http), mode=mode) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert "search_apps" in asyncio.run(list_again())
    assert len(person.pages) == 2  # nobody was asked again
    assert storage.tokens.access_token != first.access_token
    assert storage.tokens.refresh_token != first.refresh_token  # rotated


def test_a_person_without_mcp_tools_is_refused_and_the_agent_gets_no_token(stack, owner):
    person, storage = Person(stack.base, "owner", "pw-owner-123"), Memory()

    async def connect():
        http = create_mcp_http_client(auth=agent(stack, person, storage))
        async with http, Client(streamable_http_client(stack.base + "/mcp", http_client=http)) as client:
            await client.list_tools()

    with pytest.raises(ExceptionGroup) as refused:  # the SDK's task groups carry the callback's error
        asyncio.run(connect())
    assert refused.group_contains(PermissionError, match="access_denied")
    assert person.pages[0].status_code == 403 and "MCP Tools" in person.pages[0].text
    assert person.callback["error"] == "access_denied"
    assert storage.tokens is None and not AccessToken.objects.exists()
