"""The bearer check of /mcp through HTTP: 401 and 403 with their WWW-Authenticate challenges."""

from datetime import timedelta

import pytest
from django.conf import settings
from oauth2_provider.models import AccessToken

from mcp_auth.tests.conftest import Mcp
from mcp_auth.tests.tokens import grant_mcp_tools, issue_token
from mcp_auth.validator import McpValidator

pytestmark = pytest.mark.django_db

METADATA = settings.MCP_URL + "/.well-known/oauth-protected-resource/mcp"


def list_tools(client, token, **headers):
    return Mcp(client, token).request("tools/list", **headers)


def test_it_asks_for_a_token_pointing_at_its_metadata(client):
    response = list_tools(client, None)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == f'Bearer resource_metadata="{METADATA}", scope="mcp:tools"'
    assert response.json() == {"error": "authentication required"}


def test_it_exposes_the_challenge_to_browsers(client):
    response = list_tools(client, None, Origin=settings.MCP_URL)
    assert response.status_code == 401
    assert response["Access-Control-Allow-Origin"] == settings.MCP_URL
    assert "WWW-Authenticate" in response["Access-Control-Expose-Headers"]


@pytest.mark.parametrize("header", ["Basic dXNlcjpwdw==", "Bearer", "Bearer    ", "token abc"])
def test_it_answers_other_schemes_and_empty_tokens_as_no_token_at_all(client, header):
    response = Mcp(client, None).request("tools/list", Authorization=header)
    assert response.status_code == 401
    # RFC 6750 3.1: a request with no bearer token gets the challenge without an error code
    assert response["WWW-Authenticate"] == f'Bearer resource_metadata="{METADATA}", scope="mcp:tools"'


def test_it_refuses_an_unknown_token(client, agent_user):
    response = list_tools(client, "not-a-token-we-issued")
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert f'resource_metadata="{METADATA}"' in response["WWW-Authenticate"]


def test_it_refuses_an_expired_token(client, agent_user):
    raw, _ = issue_token(agent_user, expires_in=timedelta(seconds=-1))
    response = list_tools(client, raw)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_it_refuses_a_revoked_token(client, agent_user, settings):
    settings.MCP_TOKEN_CHECK_SECONDS = 0
    raw, row = issue_token(agent_user)
    assert list_tools(client, raw).status_code == 200
    row.revoke()  # DOT deletes the row
    assert not AccessToken.objects.exists()
    response = list_tools(client, raw)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_a_remembered_token_is_refused_as_soon_as_its_revocation_commits(
    client, agent_user, django_capture_on_commit_callbacks
):
    from mcp_server import bearer

    raw, row = issue_token(agent_user)
    assert list_tools(client, raw).status_code == 200
    remembered = bearer._valid.get(row.token_checksum)
    assert remembered is not None
    with django_capture_on_commit_callbacks(execute=True):
        row.revoke()  # as another process would: this process's memory is left as it was
    assert bearer._valid.get(row.token_checksum) == remembered
    response = list_tools(client, raw)
    assert response.status_code == 401 and 'error="invalid_token"' in response["WWW-Authenticate"]
    assert bearer._valid.get(row.token_checksum) is None


def test_a_revocation_rolled_back_leaves_the_token_working(client, agent_user, django_capture_on_commit_callbacks):
    from django.db import transaction

    raw, row = issue_token(agent_user)
    token_id = row.pk
    assert list_tools(client, raw).status_code == 200
    with django_capture_on_commit_callbacks(execute=True) as marks:
        try:
            with transaction.atomic():
                row.revoke()
                raise RuntimeError("rolled back")
        except RuntimeError:
            pass
    assert marks == [] and AccessToken.objects.filter(pk=token_id).exists()
    assert list_tools(client, raw).status_code == 200


def test_without_the_shared_cache_a_remembered_token_is_checked_in_the_database(client, agent_user, monkeypatch):
    from django.core.cache import cache

    raw, row = issue_token(agent_user)
    assert list_tools(client, raw).status_code == 200

    def unreachable(*args, **kwargs):
        raise ConnectionError("Redis is down")

    monkeypatch.setattr(cache, "get", unreachable)
    assert list_tools(client, raw).status_code == 200
    row.revoke()  # no mark reaches the cache; the database still knows
    assert list_tools(client, raw).status_code == 401


def test_a_remembered_token_costs_no_query_and_one_cache_read(agent_user, django_assert_num_queries, monkeypatch):
    from django.core.cache import cache

    from mcp_server import bearer

    raw, _ = issue_token(agent_user)
    assert isinstance(bearer.authenticate(authorization=f"Bearer {raw}"), bearer.Bearer)
    reads = []
    real_get = cache.get
    monkeypatch.setattr(cache, "get", lambda key, *args, **kwargs: reads.append(key) or real_get(key, *args, **kwargs))
    with django_assert_num_queries(0):
        assert isinstance(bearer.authenticate(authorization=f"Bearer {raw}"), bearer.Bearer)
    assert len(reads) == 1


def test_a_tokens_use_is_recorded_at_most_once_a_minute_in_a_process(client, agent_user, manual_clock):
    from mcp_auth.models import ConnectedClient
    from mcp_server import bearer

    bearer._recorded.clock = manual_clock
    raw, row = issue_token(agent_user)
    assert list_tools(client, raw).status_code == 200
    first = ConnectedClient.objects.get(user=agent_user, application=row.application)
    assert first.last_used_at is not None and first.connected_at is None
    manual_clock.now += 59
    assert list_tools(client, raw).status_code == 200
    assert ConnectedClient.objects.get(pk=first.pk).last_used_at == first.last_used_at
    manual_clock.now += 1
    assert list_tools(client, raw).status_code == 200
    assert ConnectedClient.objects.get(pk=first.pk).last_used_at > first.last_used_at
    assert ConnectedClient.objects.count() == 1


def test_a_remembered_token_still_expires_on_time(client, agent_user):
    raw, row = issue_token(agent_user)
    assert list_tools(client, raw).status_code == 200
    from mcp_server import bearer

    found, _ = bearer._valid.get(row.token_checksum)
    expired = row.expires - timedelta(hours=2)  # as if its hour had passed within the check window
    AccessToken.objects.filter(pk=row.pk).update(expires=expired)
    bearer._valid.set(row.token_checksum, (found, expired))
    assert list_tools(client, raw).status_code == 401


@pytest.mark.parametrize(
    "resource",
    [
        ["https://api.elsewhere.example"],
        [settings.MCP_URL + "/mcp/"],  # exact strings only
        [settings.MCP_URL + "/other"],
        [],  # DOT reads "no resource" as any audience; a token for this server must name it
    ],
)
def test_it_refuses_a_token_bound_to_another_resource(client, agent_user, resource):
    raw, _ = issue_token(agent_user, resource=resource)
    response = list_tools(client, raw)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


@pytest.mark.parametrize("resource", [[settings.MCP_URL], [settings.MCP_URL + "/mcp"], ["x", settings.MCP_URL]])
def test_it_accepts_tokens_bound_to_either_resource_identifier(client, agent_user, resource):
    raw, _ = issue_token(agent_user, resource=resource)
    assert list_tools(client, raw).status_code == 200


def test_it_refuses_a_token_of_an_inactive_user(client, agent_user):  # checked before it is remembered
    raw, _ = issue_token(agent_user)
    agent_user.is_active = False
    agent_user.save()
    assert list_tools(client, raw).status_code == 401


def test_a_user_who_lost_the_mcp_tools_permission_gets_403(client, agent_user):
    raw, _ = issue_token(agent_user)
    assert list_tools(client, raw).status_code == 200
    agent_user.user_permissions.clear()
    from edge import process_cache

    process_cache.reset_all()  # past MCP_TOKEN_CHECK_SECONDS
    response = list_tools(client, raw)
    assert response.status_code == 403
    assert "WWW-Authenticate" not in response  # signing in again would not help
    assert "MCP Tools" in response.json()["error"]


def test_the_permission_may_come_from_a_group(client, another_account):
    from django.contrib.auth.models import Group, Permission

    group = Group.objects.create(name="agents")
    group.permissions.add(Permission.objects.get(codename="use_mcp_tools"))
    another_account.groups.add(group)
    raw, _ = issue_token(another_account)
    assert list_tools(client, raw).status_code == 200


def test_a_superuser_needs_no_explicit_permission(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "pw-root-123")
    raw, _ = issue_token(admin)
    assert list_tools(client, raw).status_code == 200


def test_it_refuses_a_token_in_the_query_string_even_a_valid_one(client, agent_user):
    raw, _ = issue_token(agent_user)
    mcp = Mcp(client, None)
    response = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, path=f"/mcp?access_token={raw}")
    assert response.status_code == 400
    assert 'error="invalid_request"' in response["WWW-Authenticate"]
    assert raw not in response.content.decode()
    # Also beside a valid header: a token in a URL is refused, wherever else one is.
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = Mcp(client, raw).post(message, path=f"/mcp?access_token={raw}")
    assert response.status_code == 400


def test_a_token_without_mcp_tools_gets_403_naming_the_scope(client, agent_user):
    raw, _ = issue_token(agent_user, scope="mcp:automation_builder")
    response = list_tools(client, raw)
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response["WWW-Authenticate"]
    assert 'scope="mcp:tools"' in response["WWW-Authenticate"]


def test_a_builder_tool_without_the_builder_scope_gets_403_naming_every_scope_it_needs(client, agent_user):
    raw, _ = issue_token(agent_user, scope="mcp:tools")
    response = Mcp(client, raw).request("tools/call", {"name": "create_automation", "arguments": {}})
    assert response.status_code == 403
    challenge = response["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge
    # The missing scope first: not scopes_supported's order, which mcp-remote mistakes for its own default.
    assert 'scope="mcp:automation_builder mcp:tools"' in challenge
    assert f'resource_metadata="{METADATA}"' in challenge


def test_the_token_never_appears_in_an_answer(client, agent_user):
    raw, _ = issue_token(agent_user, scope="mcp:automation_builder")
    for response in (list_tools(client, raw), list_tools(client, raw + "x")):
        assert raw not in response.content.decode()
        assert raw not in response.get("WWW-Authenticate", "")


def test_the_token_row_is_found_by_its_checksum_as_dot_stores_it(agent_user):
    import hashlib

    from mcp_server import bearer

    raw, row = issue_token(agent_user)
    assert row.token_checksum == hashlib.sha256(raw.encode()).hexdigest()
    found = bearer.authenticate(authorization=f"Bearer {raw}")
    assert isinstance(found, bearer.Bearer) and found.user == agent_user
    assert found.scopes == {"mcp:tools"}


def test_it_grants_nothing_to_a_user_never_given_the_permission(client, another_account):
    raw, _ = issue_token(another_account)
    assert list_tools(client, raw).status_code == 403  # a refusal is never remembered
    grant_mcp_tools(another_account)
    assert list_tools(client, raw).status_code == 200


class _DisabledApplications(McpValidator):
    """As a deployment might say an application was switched off: DOT's own bearer check then refuses its tokens."""

    def validate_bearer_token(self, token, scopes, request):
        return False


def test_the_token_is_checked_by_the_configured_oauth_validator(client, agent_user, settings):
    raw, _ = issue_token(agent_user)
    settings.MCP_TOKEN_CHECK_SECONDS = 0
    assert list_tools(client, raw).status_code == 200
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "OAUTH2_VALIDATOR_CLASS": _DisabledApplications}
    response = list_tools(client, raw)
    assert response.status_code == 401 and 'error="invalid_token"' in response["WWW-Authenticate"]


def test_a_token_of_no_user_is_refused_not_a_failure(client, agent_user):
    raw, row = issue_token(agent_user)
    AccessToken.objects.filter(pk=row.pk).update(user=None)  # DOT allows it: a client-credentials token has none
    response = list_tools(client, raw)
    assert response.status_code == 401 and 'error="invalid_token"' in response["WWW-Authenticate"]
