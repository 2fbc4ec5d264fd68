"""POST {base_url}/oauth/revoke (RFC 7009): either token of a pair ends both; only the client's own tokens."""

import pytest
from django.test import Client
from oauth2_provider.models import AccessToken, RefreshToken

from mcp_auth.tests.conftest import code_for, exchange, refresh, register, start_flow

pytestmark = pytest.mark.django_db


def revoke(client, flow, token, **extra):
    return client.post("/oauth/revoke", {"token": token, "client_id": flow.client_id, **extra})


def test_revoking_the_access_token_ends_the_refresh_token_too(client, tokens):
    flow, body = tokens
    assert revoke(client, flow, body["access_token"], token_type_hint="access_token").status_code == 200
    assert not AccessToken.objects.exists()
    assert refresh(client, flow, body["refresh_token"]).json()["error"] == "invalid_grant"


def test_revoking_the_refresh_token_ends_the_access_token_too(client, tokens):
    flow, body = tokens
    assert revoke(client, flow, body["refresh_token"]).status_code == 200
    assert not AccessToken.objects.exists()
    assert RefreshToken.objects.get().revoked is not None


def test_an_unknown_or_already_revoked_token_is_answered_200_as_rfc_7009_says(client, tokens):
    flow, body = tokens
    assert revoke(client, flow, "no-such-token").status_code == 200
    assert revoke(client, flow, body["refresh_token"]).status_code == 200
    assert revoke(client, flow, body["refresh_token"]).status_code == 200


def test_a_client_cannot_revoke_another_clients_token(client, tokens):
    _, body = tokens
    stranger = start_flow(register(Client()))
    assert revoke(client, stranger, body["access_token"]).status_code == 200
    assert AccessToken.objects.count() == 1


def test_a_confidential_client_must_authenticate_to_revoke(signed_in):
    agent = register(Client(), token_endpoint_auth_method="client_secret_post")
    flow = start_flow(agent)
    body = exchange(signed_in, flow, code_for(signed_in, flow)).json()
    refused = revoke(signed_in, flow, body["access_token"], client_secret="wrong")
    assert refused.status_code == 401
    assert AccessToken.objects.count() == 1
    assert revoke(signed_in, flow, body["access_token"], client_secret=flow.secret).status_code == 200
    assert not AccessToken.objects.exists()


def test_a_token_in_the_url_is_refused_and_stays_valid(client, tokens):
    flow, body = tokens
    response = client.post(f"/oauth/revoke?token={body['access_token']}", {"client_id": flow.client_id})
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    assert AccessToken.objects.count() == 1


def test_the_revocation_endpoint_is_open_to_any_origin_and_answers_the_preflight(client, tokens):
    flow, body = tokens
    assert revoke(client, flow, body["access_token"])["Access-Control-Allow-Origin"] == "*"
    preflight = client.options("/oauth/revoke", HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST")
    assert preflight.status_code == 204 and preflight["Access-Control-Allow-Origin"] == "*"
