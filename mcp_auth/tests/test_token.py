"""POST {base_url}/oauth/token: codes for tokens with PKCE, refresh with rotation and reuse detection."""

import base64
import hashlib
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Grant, RefreshToken

from mcp_auth.models import RegisteredClient, SpentCode
from mcp_auth.tests.conftest import code_for, exchange, refresh, register, start_flow
from mcp_auth.validator import McpValidator
from tests.e2e.stack import wait_until
from tests.races import at_once

pytestmark = pytest.mark.django_db


def checksum(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def test_a_code_and_its_verifier_give_an_access_token_bound_to_the_resource_and_a_refresh_token(tokens):
    flow, body = tokens
    assert body["token_type"] == "Bearer"
    assert 0 < body["expires_in"] <= 3600
    assert body["scope"] == "mcp:tools"
    assert body["access_token"] and body["refresh_token"]
    access = AccessToken.objects.get(token_checksum=checksum(body["access_token"]))
    assert access.resource == ["http://testserver/mcp"]
    assert access.user.username == "owner"
    assert access.expires <= timezone.now() + timedelta(seconds=3600)
    assert RefreshToken.objects.get(token_checksum=checksum(body["refresh_token"])).resource == [
        "http://testserver/mcp"
    ]


def test_tokens_are_kept_only_as_their_hash(tokens):
    _, body = tokens
    assert set(AccessToken.objects.values_list("token", flat=True)) == {""}
    assert set(RefreshToken.objects.values_list("token", flat=True)) == {""}
    assert not Grant.objects.exists()  # the code is gone once used


def test_the_first_token_marks_the_client_used(tokens):
    flow, _ = tokens
    assert RegisteredClient.objects.get(application__client_id=flow.client_id).first_token_at is not None


@pytest.mark.parametrize(
    "verifier, error",
    [(None, "invalid_request"), ("x" * 50, "invalid_grant"), ("", "invalid_request")],
)
def test_a_missing_or_wrong_pkce_verifier_gets_no_token(signed_in, agent, verifier, error):
    flow = start_flow(agent)
    response = exchange(signed_in, flow, code_for(signed_in, flow), code_verifier=verifier)
    assert response.status_code in (400, 401)
    assert response.json()["error"] == error, response.json()
    assert not AccessToken.objects.exists()


def test_the_verifier_of_another_request_gets_no_token(signed_in, agent):
    first, second = start_flow(agent), start_flow(agent)
    code = code_for(signed_in, first)
    assert exchange(signed_in, first, code, code_verifier=second.verifier).json()["error"] == "invalid_grant"


def test_a_code_used_twice_revokes_the_tokens_it_gave(signed_in, agent, tokens):
    flow = start_flow(agent)
    code = code_for(signed_in, flow)
    first = exchange(signed_in, flow, code).json()
    _, other = tokens  # another authorization of the same user: not touched

    again = exchange(signed_in, flow, code)

    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert not AccessToken.objects.filter(token_checksum=checksum(first["access_token"])).exists()
    assert refresh(signed_in, flow, first["refresh_token"]).json()["error"] == "invalid_grant"
    assert AccessToken.objects.filter(token_checksum=checksum(other["access_token"])).exists()
    assert SpentCode.objects.filter(code_checksum=checksum(code)).exists()  # kept only as its hash


def test_a_code_never_issued_or_expired_revokes_nothing(signed_in, agent, tokens):
    flow = start_flow(agent)
    code = code_for(signed_in, flow)
    Grant.objects.filter(code=code).update(expires=timezone.now() - timedelta(seconds=1))
    assert exchange(signed_in, flow, code).json()["error"] == "invalid_grant"
    assert exchange(signed_in, flow, "never-issued").json()["error"] == "invalid_grant"
    assert AccessToken.objects.count() == RefreshToken.objects.filter(revoked__isnull=True).count() == 1


@pytest.fixture
def racing(approver) -> tuple:
    """A flow of a registered agent and a client signed in as its approver, on connections of their own: for
    requests that race each other on threads (transaction=True tests)."""
    agent, signed_in = register(Client()), Client()
    signed_in.force_login(approver)
    return start_flow(agent), signed_in


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="races between connections need PostgreSQL")
def test_two_exchanges_of_one_code_that_both_pass_the_check_leave_no_live_token(racing, monkeypatch):
    """Both requests validate the code and save tokens before either deletes its grant: the loser finds the
    grant gone, so the code was used twice, and the tokens of both go."""
    flow, signed_in = racing
    code = code_for(signed_in, flow)
    both_saved = threading.Barrier(2, timeout=10)
    save = McpValidator.save_bearer_token

    def save_then_wait(self, token, request, *args, **kwargs):
        saved = save(self, token, request, *args, **kwargs)
        both_saved.wait()
        return saved

    monkeypatch.setattr(McpValidator, "save_bearer_token", save_then_wait)
    answers = at_once(*[lambda: exchange(Client(), flow, code)] * 2)

    assert sorted(answer.status_code for answer in answers) == [200, 400]
    assert not AccessToken.objects.exists()
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="races between connections need PostgreSQL")
def test_a_code_whose_grant_a_racing_exchange_deleted_after_the_check_is_invalid_grant_not_a_500(racing, monkeypatch):
    flow, signed_in = racing
    code = code_for(signed_in, flow)
    both_checked, arrivals, validate = threading.Barrier(2, timeout=10), [], McpValidator.validate_code

    def check_then_let_the_first_finish(self, client_id, code, client, request, *args, **kwargs):
        valid = validate(self, client_id, code, client, request, *args, **kwargs)
        arrivals.append(both_checked.wait())
        if len(arrivals) == 2:  # the second here reads the PKCE challenge once the first has spent the code
            wait_until(lambda: not Grant.objects.filter(code=code).exists(), 10, 0.01, "the first exchange")
        return valid

    monkeypatch.setattr(McpValidator, "validate_code", check_then_let_the_first_finish)
    answers = at_once(lambda: exchange(Client(), flow, code), lambda: exchange(Client(), flow, code))

    assert sorted(answer.status_code for answer in answers) == [200, 400]
    assert [answer.json()["error"] for answer in answers if answer.status_code == 400] == ["invalid_grant"]
    assert not AccessToken.objects.exists()  # used twice: the first exchange's tokens go too


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="races between connections need PostgreSQL")
def test_two_refreshes_with_one_token_at_once_are_reuse_and_no_answer_has_an_empty_token(racing, monkeypatch):
    flow, signed_in = racing
    first = exchange(signed_in, flow, code_for(signed_in, flow)).json()
    both_checked, validate = threading.Barrier(2, timeout=10), McpValidator.validate_refresh_token

    def check_then_wait_for_the_other(self, *args, **kwargs):
        valid = validate(self, *args, **kwargs)
        both_checked.wait()
        return valid

    monkeypatch.setattr(McpValidator, "validate_refresh_token", check_then_wait_for_the_other)
    answers = at_once(*[lambda: refresh(Client(), flow, first["refresh_token"])] * 2)

    assert sorted(answer.status_code for answer in answers) == [200, 400]
    assert [answer.json()["error"] for answer in answers if answer.status_code == 400] == ["invalid_grant"]
    assert all(answer.json()["access_token"] for answer in answers if answer.status_code == 200)
    assert not AccessToken.objects.exists()  # the family is revoked, the winner's new tokens with it
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()


def test_a_code_is_for_the_client_and_redirect_uri_it_was_issued_to(signed_in, agent):
    other = register(Client())
    flow = start_flow(agent)
    code = code_for(signed_in, flow)
    assert exchange(signed_in, flow, code, client_id=other["client_id"]).json()["error"] == "invalid_grant"
    # RFC 6749 5.2: invalid_grant, when the grant "does not match the redirection URI used in the authorization request"
    other_uri = exchange(signed_in, flow, code, redirect_uri="http://127.0.0.1:33418/other")
    assert other_uri.json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    ("overrides", "description"),
    [
        ({"code_verifier": "abc"}, "code_verifier must be 43 to 128"),
        ({"code_verifier": "a" * 129}, "code_verifier must be 43 to 128"),
        ({"code_verifier": "a" * 42 + "+"}, "code_verifier must be 43 to 128"),
        ({"code_verifier": ["a" * 43, "b" * 43]}, "code_verifier is given more than once"),
    ],
)
def test_a_malformed_verifier_or_a_repeated_parameter_is_an_invalid_request_and_spends_no_code(
    signed_in, agent, overrides, description
):
    flow = start_flow(agent)
    code = code_for(signed_in, flow)
    response = exchange(signed_in, flow, code, **overrides)
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    assert response.json()["error_description"].startswith(description)
    assert exchange(signed_in, flow, code).status_code == 200  # the code was not spent


def test_an_expired_code_gets_no_token(signed_in, agent):
    flow = start_flow(agent)
    code = code_for(signed_in, flow)
    Grant.objects.update(expires=timezone.now() - timedelta(seconds=1))
    assert exchange(signed_in, flow, code).json()["error"] == "invalid_grant"


@pytest.mark.parametrize("resource", ["https://evil.example/mcp", "http://testserver"])
def test_a_token_request_naming_another_resource_is_refused(signed_in, agent, resource):
    flow = start_flow(agent)
    response = exchange(signed_in, flow, code_for(signed_in, flow), resource=resource)
    assert response.json()["error"] == "invalid_target"
    assert not AccessToken.objects.exists()


def test_a_token_request_repeating_its_resource_is_answered(signed_in, agent):
    flow = start_flow(agent)
    assert exchange(signed_in, flow, code_for(signed_in, flow), resource="http://testserver/mcp").status_code == 200


def test_refreshing_rotates_the_refresh_token_and_keeps_the_binding(client, tokens):
    flow, body = tokens
    renewed = refresh(client, flow, body["refresh_token"])
    assert renewed.status_code == 200, renewed.content
    fresh = renewed.json()
    assert fresh["refresh_token"] != body["refresh_token"] and fresh["access_token"] != body["access_token"]
    assert not AccessToken.objects.filter(token_checksum=checksum(body["access_token"])).exists()
    assert AccessToken.objects.get(token_checksum=checksum(fresh["access_token"])).resource == ["http://testserver/mcp"]


def test_a_reused_rotated_refresh_token_revokes_the_whole_grant(client, tokens):
    flow, body = tokens
    fresh = refresh(client, flow, body["refresh_token"]).json()
    replay = refresh(client, flow, body["refresh_token"])
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    # The thief's replay also ends the legitimate client's session: every token of the family is gone.
    assert refresh(client, flow, fresh["refresh_token"]).json()["error"] == "invalid_grant"
    assert not AccessToken.objects.exists()
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()


def test_a_revoked_refresh_token_gets_nothing(client, tokens):
    flow, body = tokens
    assert (
        client.post("/oauth/revoke", {"token": body["refresh_token"], "client_id": flow.client_id}).status_code == 200
    )
    assert refresh(client, flow, body["refresh_token"]).json()["error"] == "invalid_grant"


@pytest.mark.parametrize("change", ["withdraw MCP Tools", "deactivate"])
def test_a_user_no_longer_allowed_mcp_tools_gets_no_new_tokens_by_refresh(client, tokens, approver, change):
    flow, body = tokens
    if change == "deactivate":
        approver.is_active = False
        approver.save()
    else:
        approver.user_permissions.clear()
        approver.groups.clear()
    assert refresh(client, flow, body["refresh_token"]).json()["error"] == "invalid_grant"
    assert AccessToken.objects.count() == 1  # only the first


def test_an_expired_refresh_token_gets_nothing(client, tokens, settings):
    flow, body = tokens
    lifetime = settings.OAUTH2_PROVIDER["REFRESH_TOKEN_EXPIRE_SECONDS"]
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=lifetime + 1))
    assert refresh(client, flow, body["refresh_token"]).json()["error"] == "invalid_grant"


def test_a_refresh_token_is_for_its_own_client(client, tokens):
    _, body = tokens
    thief = start_flow(register(Client()))
    assert refresh(client, thief, body["refresh_token"]).json()["error"] == "invalid_grant"


def test_a_refresh_cannot_widen_the_scope_or_change_the_resource(client, tokens):
    flow, body = tokens
    assert refresh(client, flow, body["refresh_token"], scope="mcp:automation_builder").json()["error"] == (
        "invalid_scope"
    )
    assert refresh(client, flow, body["refresh_token"], resource="https://evil.example/mcp").json()["error"] == (
        "invalid_target"
    )


def test_a_confidential_client_must_send_its_secret(signed_in):
    agent = register(Client(), token_endpoint_auth_method="client_secret_post")
    flow = start_flow(agent)
    wrong = exchange(signed_in, flow, code_for(signed_in, flow), client_secret="wrong")
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    missing = exchange(signed_in, flow, code_for(signed_in, flow), client_secret=None)
    assert missing.status_code == 401
    assert exchange(signed_in, flow, code_for(signed_in, flow)).status_code == 200


def test_a_client_that_authenticates_with_basic_and_fails_is_challenged_with_basic(signed_in):
    agent = register(Client(), token_endpoint_auth_method="client_secret_basic")
    flow = start_flow(agent)
    code = code_for(signed_in, flow)
    wrong = base64.b64encode(f"{agent['client_id']}:wrong".encode()).decode()
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": flow.params["redirect_uri"]}
    response = signed_in.post(
        "/oauth/token", {**data, "code_verifier": flow.verifier}, HTTP_AUTHORIZATION=f"Basic {wrong}"
    )
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"
    assert response["WWW-Authenticate"].startswith("Basic ")


def test_resource_given_twice_is_not_refused_as_a_repeated_parameter(signed_in, agent):
    flow = start_flow(agent)
    both = exchange(signed_in, flow, code_for(signed_in, flow), resource=["http://testserver/mcp"] * 2)
    assert both.json().get("error") != "invalid_request"  # RFC 8707 lets it repeat; its own check decides


def test_a_client_failing_basic_authentication_at_revocation_is_challenged_with_basic(signed_in):
    agent = register(Client(), token_endpoint_auth_method="client_secret_basic")
    wrong = base64.b64encode(f"{agent['client_id']}:wrong".encode()).decode()
    response = signed_in.post("/oauth/revoke", {"token": "x"}, HTTP_AUTHORIZATION=f"Basic {wrong}")
    assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Basic ")


def test_parameters_in_the_url_are_refused(signed_in, agent):
    flow = start_flow(agent)
    code = code_for(signed_in, flow)
    response = signed_in.post(
        f"/oauth/token?code={code}&grant_type=authorization_code", {"code_verifier": flow.verifier}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    assert "body" in response.json()["error_description"]
    assert exchange(signed_in, flow, code).status_code == 200  # the code was not spent


@pytest.mark.parametrize(
    "data",
    [
        {"grant_type": "authorization_code", "code": "a\x00b", "client_id": "x", "code_verifier": "v"},
        {"grant_type": "refresh_token", "refresh_token": "\x00"},
        {"grant_type": "password", "username": "owner", "password": "pw-owner-123"},
        {"grant_type": "client_credentials"},
        {"grant_type": "implicit"},
        {},
    ],
)
def test_hostile_or_unsupported_token_requests_get_an_oauth_error(client, agent, data):
    data = {"client_id": agent["client_id"], **data}
    response = client.post("/oauth/token", data)
    assert 400 <= response.status_code < 500
    assert response.json()["error"]
    assert not AccessToken.objects.exists()


@pytest.mark.parametrize("grant_type", ["password", "client_credentials", "implicit", "urn:x"])
def test_a_grant_type_the_metadata_does_not_list_is_unsupported_before_anything_is_checked(
    client, agent, owner, grant_type
):
    answers = [
        client.post(
            "/oauth/token",
            {"grant_type": grant_type, "client_id": agent["client_id"], "username": "owner", "password": password},
        )
        for password in ("pw-owner-123", "wrong")  # a right password and a wrong one get the same answer
    ]
    assert [(answer.status_code, answer.json()) for answer in answers] == [
        (400, {"error": "unsupported_grant_type"})
    ] * 2


def test_the_token_endpoint_is_open_to_any_origin_and_answers_the_preflight(client, tokens):
    flow, body = tokens
    renewed = refresh(client, flow, body["refresh_token"], HTTP_ORIGIN="http://localhost:6274")
    assert renewed["Access-Control-Allow-Origin"] == "*"
    assert renewed["Cache-Control"] == "no-store"
    preflight = client.options("/oauth/token", HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST")
    assert preflight.status_code == 204 and preflight["Access-Control-Allow-Origin"] == "*"
    assert client.get("/oauth/token").status_code == 405
