"""GET {base_url}/.well-known/oauth-authorization-server: exactly SPEC section 5's fields and values."""

import pytest
from django.test import Client

EXPECTED = {
    "issuer": "http://testserver",
    "authorization_endpoint": "http://testserver/oauth/login",
    "token_endpoint": "http://testserver/oauth/token",
    "registration_endpoint": "http://testserver/oauth/client",
    "revocation_endpoint": "http://testserver/oauth/revoke",
    "scopes_supported": ["mcp:tools", "mcp:automation_builder"],
    "response_types_supported": ["code"],
    "grant_types_supported": ["authorization_code", "refresh_token"],
    "code_challenge_methods_supported": ["S256"],
    "token_endpoint_auth_methods_supported": ["client_secret_post"],
}


def test_it_publishes_exactly_the_fields_and_values_of_spec_section_5(client):
    response = client.get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == EXPECTED
    assert list(response.json()) == list(EXPECTED)


def test_the_issuer_is_base_url_byte_for_byte_on_separate_hosts(client, settings):
    settings.BASE_URL, settings.MCP_URL = "https://app.example.com:8443", "https://mcp.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com", "mcp.example.com"]
    response = client.get("/.well-known/oauth-authorization-server", HTTP_HOST="app.example.com:8443", secure=True)
    document = response.json()
    assert document["issuer"] == "https://app.example.com:8443"
    assert document["token_endpoint"] == "https://app.example.com:8443/oauth/token"
    # The MCP host serves no authorization server paths: clients find them through the issuer.
    assert (
        client.get("/.well-known/oauth-authorization-server", HTTP_HOST="mcp.example.com", secure=True).status_code
        == 404
    )


def test_the_issuer_is_byte_identical_to_the_authorization_server_the_mcp_host_names(client, settings):
    """Clients compare the two as strings (RFC 8414 3.3, RFC 9728): a slash or a port written apart breaks them."""
    settings.BASE_URL, settings.MCP_URL = "https://app.example.com:8443", "https://mcp.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com", "mcp.example.com"]
    issuer = client.get("/.well-known/oauth-authorization-server", HTTP_HOST="app.example.com:8443", secure=True)
    raw_issuer = issuer.content.split(b'"issuer": ')[1].split(b",")[0]
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        named = client.get(path, HTTP_HOST="mcp.example.com", secure=True)
        assert named.status_code == 200, path
        assert named.json()["authorization_servers"] == [issuer.json()["issuer"]]
        assert b'"authorization_servers": [' + raw_issuer + b"]" in named.content, named.content


def test_it_is_open_to_any_origin_without_credentials_and_answers_the_preflight(client):
    response = client.get("/.well-known/oauth-authorization-server", HTTP_ORIGIN="https://inspector.example")
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in response
    preflight = client.options(
        "/.well-known/oauth-authorization-server",
        HTTP_ORIGIN="https://inspector.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="mcp-protocol-version",
    )
    assert preflight.status_code == 204
    assert preflight["Access-Control-Allow-Origin"] == "*"
    assert "GET" in preflight["Access-Control-Allow-Methods"]
    assert "MCP-Protocol-Version" in preflight["Access-Control-Allow-Headers"]


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_other_methods_are_refused(method):
    client = Client(enforce_csrf_checks=True)  # as a real server does: not a 403 for a missing CSRF token
    response = getattr(client, method)("/.well-known/oauth-authorization-server")
    assert response.status_code == 405
    assert response["Access-Control-Allow-Origin"] == "*"
