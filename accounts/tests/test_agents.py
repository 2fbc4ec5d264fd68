"""/account/agents: a person's connected AI agents, through the real OAuth round trip and the real MCP endpoint."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Grant, RefreshToken

from mcp_auth.models import ConnectedClient
from mcp_auth.tests.conftest import Mcp, code_for, exchange, refresh, register, start_flow
from mcp_auth.tests.tokens import ALL_SCOPES, grant_mcp_tools
from mcp_server import bearer

pytestmark = pytest.mark.django_db

PAGE = "/account/agents"


def connect(user, *, name: str = "Test Agent", scope: str = "mcp:tools"):
    """A client registered as MCP clients do, approved by user on the consent page: (application id, flow, tokens)."""
    grant_mcp_tools(user)
    browser = Client()
    browser.force_login(user)
    registered = register(Client(), client_name=name)
    flow = start_flow(registered, scope=scope)
    response = exchange(Client(), flow, code_for(browser, flow))
    assert response.status_code == 200, response.content
    application_id = AccessToken.objects.get(application__client_id=registered["client_id"], user=user).application_id
    return application_id, flow, response.json()


def list_tools(token: str):
    return Mcp(Client(), token).request("tools/list")


def disconnect_url(agent_id: int) -> str:
    return f"{PAGE}/{agent_id}/disconnect"


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def test_a_signed_out_visitor_is_sent_to_sign_in_and_disconnects_nothing(client, owner):
    agent_id, _, tokens = connect(owner)
    response = client.get(PAGE)
    assert response.status_code == 302 and response["Location"] == "/login?next=/account/agents"
    response = client.post(disconnect_url(agent_id))
    assert response.status_code == 302 and response["Location"].startswith("/login?next=")
    assert list_tools(tokens["access_token"]).status_code == 200


def test_another_persons_agent_is_not_found_and_stays_connected(signed_in, another_account):
    agent_id, _, tokens = connect(another_account)
    response = signed_in.post(disconnect_url(agent_id))
    assert response.status_code == 404
    assert "Not found" in response.content.decode()
    assert list_tools(tokens["access_token"]).status_code == 200
    assert RefreshToken.objects.filter(user=another_account, revoked__isnull=True).count() == 1


def test_a_shared_client_is_disconnected_for_the_person_alone(signed_in, owner, another_account):
    agent_id, flow, theirs = connect(another_account)
    grant_mcp_tools(owner)
    browser = Client()
    browser.force_login(owner)
    second = start_flow({"client_id": flow.client_id, "redirect_uris": [flow.params["redirect_uri"]]})
    mine = exchange(Client(), second, code_for(browser, second))
    assert mine.status_code == 200
    assert signed_in.post(disconnect_url(agent_id)).status_code == 302
    assert list_tools(mine.json()["access_token"]).status_code == 401
    assert list_tools(theirs["access_token"]).status_code == 200


@pytest.mark.parametrize("agent_id", [0, 999_999])
def test_an_unknown_agent_is_not_found(signed_in, agent_id):
    assert signed_in.post(disconnect_url(agent_id)).status_code == 404


def test_get_never_disconnects(signed_in, owner):
    agent_id, _, tokens = connect(owner)
    assert signed_in.get(disconnect_url(agent_id)).status_code == 405
    assert signed_in.head(disconnect_url(agent_id)).status_code == 405
    assert signed_in.get(PAGE).status_code == 200
    assert list_tools(tokens["access_token"]).status_code == 200


def test_a_disconnect_without_the_csrf_token_is_refused(owner):
    agent_id, _, tokens = connect(owner)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner)
    assert browser.post(disconnect_url(agent_id)).status_code == 403
    assert list_tools(tokens["access_token"]).status_code == 200


def test_the_page_lists_the_persons_own_agents_with_scopes_and_times(signed_in, owner, another_account):
    before = timezone.now()
    connect(owner, name="Claude Code", scope=ALL_SCOPES)
    _, _, used = connect(owner, name="Cursor")
    connect(another_account, name="Someone else's agent")
    assert list_tools(used["access_token"]).status_code == 200
    response = signed_in.get(PAGE)
    assert response.status_code == 200
    agents = {agent.name: agent for agent in response.context["agents"]}
    assert set(agents) == {"Claude Code", "Cursor"}
    assert agents["Claude Code"].scopes == ("Run and inspect your automations", "Create and change your automations")
    assert agents["Cursor"].scopes == ("Run and inspect your automations",)
    assert agents["Claude Code"].connected_at >= before and agents["Claude Code"].last_used_at is None
    assert agents["Cursor"].last_used_at >= before
    assert agents["Cursor"].answers_to == "127.0.0.1"
    page = response.content.decode()
    assert "Someone else" not in page
    assert page.count('type="submit" class="danger"') == 2 and "csrfmiddlewaretoken" in page
    assert "not yet" in page  # Claude Code's last use


def test_a_person_without_agents_reads_how_one_gets_here(signed_in):
    response = signed_in.get(PAGE)
    assert response.status_code == 200 and response.context["agents"] == []
    assert "No agent is connected" in response.content.decode()


def test_disconnecting_stops_its_access_and_refresh_tokens_at_once(
    signed_in, owner, django_capture_on_commit_callbacks
):
    agent_id, flow, tokens = connect(owner)
    assert list_tools(tokens["access_token"]).status_code == 200  # checked once and now remembered
    checksum = AccessToken.objects.get(application_id=agent_id).token_checksum
    assert bearer._valid.get(checksum) is not None
    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in.post(disconnect_url(agent_id), follow=True)
    assert response.redirect_chain == [(PAGE, 302)]
    assert "Test Agent is disconnected" in response.content.decode()
    assert response.context["agents"] == []
    refused = list_tools(tokens["access_token"])
    assert refused.status_code == 401 and 'error="invalid_token"' in refused["WWW-Authenticate"]
    again = refresh(Client(), flow, tokens["refresh_token"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert not AccessToken.objects.filter(application_id=agent_id).exists()


def test_a_code_not_yet_exchanged_dies_with_the_connection(signed_in, owner):
    agent_id, flow, _ = connect(owner)
    browser = Client()
    browser.force_login(owner)
    second = start_flow({"client_id": flow.client_id, "redirect_uris": [flow.params["redirect_uri"]]})
    code = code_for(browser, second)
    assert signed_in.post(disconnect_url(agent_id)).status_code == 302
    assert not Grant.objects.filter(application_id=agent_id).exists()
    assert exchange(Client(), second, code).status_code == 400


def test_a_second_disconnect_says_it_was_already_done(signed_in, owner):
    agent_id, _, _ = connect(owner)
    assert signed_in.post(disconnect_url(agent_id)).status_code == 302
    response = signed_in.post(disconnect_url(agent_id), follow=True)
    assert response.status_code == 200 and "already disconnected" in response.content.decode()


def test_connected_keeps_its_date_while_connected_and_starts_again_after_a_disconnect(signed_in, owner):
    agent_id, flow, _ = connect(owner)
    first = ConnectedClient.objects.get(user=owner, application_id=agent_id).connected_at
    browser = Client()
    browser.force_login(owner)
    registered = {"client_id": flow.client_id, "redirect_uris": [flow.params["redirect_uri"]]}
    again = start_flow(registered)
    assert exchange(Client(), again, code_for(browser, again)).status_code == 200
    assert ConnectedClient.objects.get(user=owner, application_id=agent_id).connected_at == first
    assert signed_in.post(disconnect_url(agent_id)).status_code == 302
    ConnectedClient.objects.filter(user=owner).update(connected_at=first - timedelta(days=3))
    later = start_flow(registered)
    assert exchange(Client(), later, code_for(browser, later)).status_code == 200
    assert ConnectedClient.objects.get(user=owner, application_id=agent_id).connected_at > first


def test_the_page_is_german_for_a_german_browser(signed_in, owner):
    connect(owner)
    page = signed_in.get(PAGE, headers={"Accept-Language": "de"}).content.decode()
    assert "Verbundene Agenten" in page and "Trennen" in page


def test_the_consent_page_says_the_person_can_disconnect_it_on_their_agents_page(owner):
    grant_mcp_tools(owner)
    browser = Client()
    browser.force_login(owner)
    page = browser.get(start_flow(register(Client())).url).content.decode()
    assert f'<a href="{PAGE}">Connected agents</a>' in page
    assert "administrator can disconnect" not in page
