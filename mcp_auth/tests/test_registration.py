"""POST {base_url}/oauth/client: RFC 7591 dynamic registration, open to anonymous clients, counted per IP."""

import json

import pytest
from django.contrib.auth.hashers import check_password
from oauth2_provider.models import Application

from mcp_auth.models import AppCallback, RegisteredClient
from mcp_auth.tests.conftest import REDIRECT, register

pytestmark = pytest.mark.django_db


def post(client, body, **extra):
    raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post("/oauth/client", raw, content_type="application/json", **extra)


def test_a_public_client_asking_for_none_is_registered_without_a_secret(client):
    body = register(client, token_endpoint_auth_method="none", client_name="VS Code")
    assert body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body
    assert body["redirect_uris"] == [REDIRECT]
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    application = Application.objects.get(client_id=body["client_id"])
    assert application.client_type == "public" and application.name == "VS Code"
    assert application.registration_source == "dcr"
    assert application.registration.token_endpoint_auth_method == "none"


def test_a_client_asking_for_client_secret_post_gets_a_secret_kept_only_as_a_hash(client):
    body = register(client, token_endpoint_auth_method="client_secret_post")
    assert body["token_endpoint_auth_method"] == "client_secret_post"
    assert len(body["client_secret"]) >= 64 and body["client_secret_expires_at"] == 0
    application = Application.objects.get(client_id=body["client_id"])
    assert application.client_type == "confidential"
    assert application.client_secret != body["client_secret"]
    assert check_password(body["client_secret"], application.client_secret)
    # One salted SHA-256, not PBKDF2: the secret is random, and every token request checks it.
    assert application.client_secret.startswith("client_secret_sha256$")


def test_a_client_naming_no_method_gets_client_secret_post_the_one_the_metadata_lists(client):
    response = post(client, {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"]})
    assert response.status_code == 201
    assert response.json()["token_endpoint_auth_method"] == "client_secret_post"
    assert "client_secret" in response.json()
    assert response["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai/api/mcp/auth_callback",
        "http://127.0.0.1:33418/callback",
        "http://127.0.0.1/",
        "http://[::1]:5173/oauth/callback",
        "http://localhost:6274/oauth/callback/debug",
        "cursor://anysphere.cursor-mcp/oauth/callback",  # listed by migration 0003
    ],
)
def test_https_loopback_http_and_listed_app_callbacks_may_be_registered(client, cursor_callback, uri):
    assert register(client, redirect_uris=[uri])["redirect_uris"] == [uri]


@pytest.mark.parametrize(
    "uri, problem",
    [
        ("http://example.com/callback", "only on this machine"),
        ("http://127.0.0.1.example.com/cb", "only on this machine"),
        ("vscode://unlisted/callback", "not on this server's list"),
        ("cursor://anysphere.cursor-mcp/oauth/callback/other", "not on this server's list"),
        ("javascript:alert(1)", "not on this server's list"),
        ("https://example.com/cb#fragment", "fragment"),
        ("https://user:pw@example.com/cb", "user name or password"),
        ("https://%65vil.com/cb", "host plainly"),  # a browser goes to evil.com; the consent page said %65vil.com
        ("https://good.example\\.evil.com/cb", "host plainly"),
        ("https://example.com/a b", "spaces"),
        ("https://example.com/\u00e9", "non-ASCII"),
        ("/relative/callback", "absolute URI"),
        ("https:///no-host", "must name a host"),
        ("https://example.com:99999/cb", "not a valid URI"),
        ("", "non-empty"),
    ],
)
def test_other_redirect_uris_are_refused_with_invalid_redirect_uri(client, uri, problem):
    response = post(client, {"redirect_uris": [REDIRECT, uri], "token_endpoint_auth_method": "none"})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_redirect_uri", body
    assert problem in body["error_description"]
    assert not Application.objects.exists()


def test_an_app_callback_staff_list_becomes_registrable(client):
    uri = "vscode://vscode.github-authentication/did-authenticate"
    assert post(client, {"redirect_uris": [uri]}).json()["error"] == "invalid_redirect_uri"
    AppCallback.objects.create(uri=uri, app_name="VS Code")
    assert register(client, redirect_uris=[uri])["redirect_uris"] == [uri]


@pytest.mark.parametrize(
    "body, status, described",
    [
        (b"not json", 400, "not JSON"),
        (b"[1, 2]", 400, "JSON object"),
        (b'{"redirect_uris": ["https://a.example/cb"], "x": NaN}', 400, "NaN is not a JSON number"),
        (b"\xff\xfe{}", 400, "UTF-8"),
        (b'{"a":' * 50 + b"1" + b"}" * 50, 400, "nested too deeply"),
        (b'{"a":' * 100000 + b"1" + b"}" * 100000, 413, "larger than"),
        (json.dumps({"redirect_uris": "https://a.example/cb"}).encode(), 400, "redirect_uris"),
        (json.dumps({"redirect_uris": []}).encode(), 400, "redirect_uris"),
        (json.dumps({"redirect_uris": [["https://a.example/cb"]]}).encode(), 400, "redirect_uris"),
        (json.dumps({"client_name": "x"}).encode(), 400, "redirect_uris: This field is required"),
        (json.dumps({"redirect_uris": [REDIRECT], "client_name": "a\u0000b"}).encode(), 400, "client_name"),
        (b'{"redirect_uris": ["http://127.0.0.1/cb"], "client_name": "\\ud800"}', 400, "client_name"),
        (json.dumps({"redirect_uris": [REDIRECT], "client_name": "a\nb"}).encode(), 400, "control characters"),
        (json.dumps({"redirect_uris": [REDIRECT], "client_name": "\u202egnp.exe"}).encode(), 400, "bidirectional"),
        (json.dumps({"redirect_uris": [REDIRECT], "client_name": "n" * 256}).encode(), 400, "client_name"),
        (json.dumps({"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]}).encode(), 400, "grant_types"),
        (json.dumps({"redirect_uris": [REDIRECT], "grant_types": ["refresh_token"]}).encode(), 400, "grant_types"),
        (json.dumps({"redirect_uris": [REDIRECT], "response_types": ["token"]}).encode(), 400, "response_types"),
        (
            json.dumps({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"}).encode(),
            400,
            "token_endpoint_auth_method",
        ),
        (
            json.dumps({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": ["none"]}).encode(),
            400,
            "token_endpoint_auth_method",
        ),
        (
            json.dumps({"redirect_uris": [f"http://127.0.0.1:{port}/" for port in range(1000, 1011)]}).encode(),
            400,
            "redirect_uris",
        ),
    ],
)
def test_a_document_that_is_not_valid_client_metadata_gets_a_clear_error(client, body, status, described):
    response = post(client, body)
    assert response.status_code == status
    assert response.json()["error"] == "invalid_client_metadata", response.json()
    assert described in response.json()["error_description"]
    assert not Application.objects.exists() and not RegisteredClient.objects.exists()


def test_fields_this_server_does_not_act_on_are_accepted_and_ignored(client):
    body = register(client, client_uri="https://agent.example", scope="mcp:tools offline_access", software_id="x")
    assert "client_uri" not in body and "scope" not in body


def test_registrations_are_counted_per_client_ip(client, settings):
    settings.OAUTH_REGISTRATION_RATE_IP = "2/h"
    document = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    assert post(client, document, REMOTE_ADDR="203.0.113.5").status_code == 201
    assert post(client, b"not json", REMOTE_ADDR="203.0.113.5").status_code == 400  # a refused one counts too
    refused = post(client, document, REMOTE_ADDR="203.0.113.5")
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_requests"
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert post(client, document, REMOTE_ADDR="203.0.113.6").status_code == 201
    assert Application.objects.count() == 2


def test_the_registering_address_is_recorded(client):
    response = post(client, {"redirect_uris": [REDIRECT]}, REMOTE_ADDR="198.51.100.7")
    assert RegisteredClient.objects.get(application__client_id=response.json()["client_id"]).registered_from == (
        "198.51.100.7"
    )


def test_it_is_open_to_any_origin_and_answers_the_preflight(client):
    response = post(client, {"redirect_uris": [REDIRECT]}, HTTP_ORIGIN="http://localhost:6274")
    assert response.status_code == 201 and response["Access-Control-Allow-Origin"] == "*"
    preflight = client.options("/oauth/client", HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST")
    assert preflight.status_code == 204
    assert preflight["Access-Control-Allow-Methods"] == "POST, OPTIONS"
    assert "Content-Type" in preflight["Access-Control-Allow-Headers"]


def test_a_get_is_refused(client):
    assert client.get("/oauth/client").status_code == 405


def test_peoples_passwords_keep_the_slow_password_hasher(owner):
    assert owner.password.startswith("pbkdf2_sha256$")
