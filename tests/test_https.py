"""With the SSL redirect on, plain http is sent to https, except the health checks load balancers make over http."""

import pytest


@pytest.fixture
def https_hosts(settings):
    settings.BASE_URL = "https://app.example.com"
    settings.HOOKS_URL = "https://hooks.example.com"
    settings.MCP_URL = "https://mcp.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com", "hooks.example.com", "mcp.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31536000


def test_plain_http_is_redirected_to_https(client, https_hosts):
    response = client.get("/admin/login/", HTTP_HOST="app.example.com")
    assert response.status_code == 301
    assert response["Location"] == "https://app.example.com/admin/login/"


def test_https_answers_with_hsts(client, https_hosts):
    response = client.get("/admin/login/", HTTP_HOST="app.example.com", secure=True)
    assert response.status_code == 200
    assert response["Strict-Transport-Security"] == "max-age=31536000"


def test_every_host_answers_health_checks_over_plain_http(client, https_hosts):
    for host in ("app.example.com", "hooks.example.com", "mcp.example.com"):
        response = client.get("/healthz", HTTP_HOST=host)
        assert (response.status_code, response.content) == (200, b"ok")
