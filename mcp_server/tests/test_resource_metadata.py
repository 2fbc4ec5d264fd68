"""The protected-resource metadata of MCP_URL (SPEC 4.4, RFC 9728)."""

import pytest
from django.conf import settings
from django.test import Client


def test_it_serves_the_root_document_with_mcp_url_as_resource(client):
    response = client.get("/.well-known/oauth-protected-resource")
    assert response.status_code == 200
    document = response.json()
    assert document["resource"] == settings.MCP_URL
    assert document["authorization_servers"] == [settings.BASE_URL]
    assert document["scopes_supported"] == ["mcp:tools", "mcp:automation_builder"]
    assert response["Access-Control-Allow-Origin"] == "*"


def test_it_serves_the_path_document_naming_the_endpoint_itself(client):
    document = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert document["resource"] == settings.MCP_URL + "/mcp"
    assert document["authorization_servers"] == [settings.BASE_URL]
    assert document["scopes_supported"] == ["mcp:tools", "mcp:automation_builder"]


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"])
def test_it_refuses_writes_to_the_documents(path):
    response = Client(enforce_csrf_checks=True).post(path)  # as a real server does: not a 403 for a CSRF token
    assert response.status_code == 405
    assert "GET" in response["Allow"]


@pytest.mark.django_db
def test_the_401_points_at_the_path_document_which_names_the_exact_url_called(client):
    challenge = client.post("/mcp", data="{}", content_type="application/json")["WWW-Authenticate"]
    metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
    assert metadata_url == settings.MCP_URL + "/.well-known/oauth-protected-resource/mcp"
    document = client.get(metadata_url.removeprefix(settings.MCP_URL)).json()
    assert document["resource"] == settings.MCP_URL + "/mcp"
