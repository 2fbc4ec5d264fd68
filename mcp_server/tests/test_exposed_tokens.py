"""A token sent in a URL, to /mcp or to any other path, is revoked at once with the other token of its pair."""

import pytest
from oauth2_provider.models import AccessToken, RefreshToken

from mcp_auth.tests.conftest import Mcp, refresh
from mcp_auth.tests.tokens import issue_token

pytestmark = pytest.mark.django_db

TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def list_tools(client, token):
    return Mcp(client, token).request("tools/list")


def test_a_token_refused_in_the_query_string_is_revoked_with_its_refresh_token(client, tokens, settings):
    settings.MCP_TOKEN_CHECK_SECONDS = 60
    flow, issued = tokens
    assert list_tools(client, issued["access_token"]).status_code == 200  # and remembered by this process
    response = Mcp(client, None).post(TOOLS_LIST, path=f"/mcp?access_token={issued['access_token']}")
    assert response.status_code == 400
    response = list_tools(client, issued["access_token"])  # even in the header, and remembered a moment ago
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert not AccessToken.objects.exists()
    assert RefreshToken.objects.get().revoked is not None
    assert refresh(client, flow, issued["refresh_token"]).json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    "path",
    [
        "/catalog/v1/apps?access_token={token}",
        "/no/such/page?x=1&Access_Token={token}",
        "/login?access%5Ftoken={token}",
        "/mcp?access_token=other&access_token={token}",
    ],
)
def test_a_token_in_the_query_string_of_any_path_is_revoked(client, agent_user, path):
    raw, _ = issue_token(agent_user)
    client.get(path.format(token=raw))
    assert not AccessToken.objects.exists()
    assert list_tools(client, raw).status_code == 401


def test_a_refresh_token_in_a_url_is_revoked_with_its_access_token(client, tokens):
    flow, issued = tokens
    response = client.post(f"/oauth/token?refresh_token={issued['refresh_token']}", {"grant_type": "refresh_token"})
    assert response.status_code == 400
    assert RefreshToken.objects.get().revoked is not None
    assert list_tools(client, issued["access_token"]).status_code == 401


def test_values_that_are_no_token_leave_every_token_alone(client, tokens):
    _, issued = tokens
    client.get("/catalog/v1/apps?access_token=not-a-token&refresh_token=&code=" + issued["access_token"])
    assert list_tools(client, issued["access_token"]).status_code == 200
    assert RefreshToken.objects.get().revoked is None
