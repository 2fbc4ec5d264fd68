"""Host routing: each of BASE_URL, HOOKS_URL and MCP_URL answers its own paths; one host answers all."""

import pytest
from django.test import Client

from edge.hosts import normalize_host, roles_by_host


@pytest.fixture
def three_hosts(settings):
    settings.BASE_URL = "https://app.example.com"
    settings.HOOKS_URL = "https://hooks.example.com"
    settings.MCP_URL = "https://mcp.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com", "hooks.example.com", "mcp.example.com", "forms.customer.example"]


def test_the_catalog_answers_only_on_the_base_host(client, three_apps, three_hosts):
    assert client.get("/catalog/v1/apps", HTTP_HOST="app.example.com").status_code == 200
    assert client.get("/catalog/v1/apps", HTTP_HOST="hooks.example.com").status_code == 404
    assert client.get("/catalog/v1/apps", HTTP_HOST="mcp.example.com").status_code == 404


def test_admin_and_sign_in_answer_only_on_the_base_host(client, three_hosts):
    assert client.get("/admin/login/", HTTP_HOST="app.example.com").status_code == 200
    for host in ("hooks.example.com", "mcp.example.com"):
        for path in ("/admin/", "/admin/login/", "/login", "/account/"):
            assert client.get(path, HTTP_HOST=host).status_code == 404, (host, path)


def test_a_white_label_domain_does_not_serve_the_catalog_or_admin(client, three_apps, three_hosts):
    assert client.get("/catalog/v1/apps", HTTP_HOST="forms.customer.example").status_code == 404
    assert client.get("/admin/", HTTP_HOST="forms.customer.example").status_code == 404


def test_every_host_answers_health_checks(client, three_hosts):
    for host in ("app.example.com", "hooks.example.com", "mcp.example.com"):
        assert client.get("/healthz", HTTP_HOST=host).content == b"ok"


def test_hosts_not_allowed_are_refused(client, three_hosts, db):  # db: white-label domains are looked up
    assert client.get("/catalog/v1/apps", HTTP_HOST="evil.example").status_code == 400


def test_one_host_named_by_all_three_serves_everything(client, three_apps, settings):
    assert settings.BASE_URL == settings.HOOKS_URL == settings.MCP_URL
    assert client.get("/catalog/v1/apps").status_code == 200
    assert client.get("/admin/login/").status_code == 200


def test_default_ports_are_the_same_host():
    assert normalize_host("App.Example.com:443") == "app.example.com"
    assert normalize_host("localhost:8000") == "localhost:8000"
    assert roles_by_host("http://a:80", "http://a", "http://b:8080") == {"a": ("base", "hooks"), "b:8080": ("mcp",)}


def test_a_host_nobody_serves_answers_404_on_every_path_even_in_debug(client, three_hosts, settings, db):
    settings.DEBUG = True  # as make run: Django's "The install worked successfully" page, with 200, for "/"
    for path in ("/", "/admin/", "/catalog/v1/apps"):
        response = client.get(path, HTTP_HOST="forms.customer.example")
        assert response.status_code == 404 and b"install worked" not in response.content, path
    settings.DEBUG = False
    strict = Client(enforce_csrf_checks=True)
    for extra in ({}, {"HTTP_TRANSFER_ENCODING": "chunked"}):  # not the CSRF check's 403, nor a 411
        assert strict.post("/login", HTTP_HOST="forms.customer.example", **extra).status_code == 404
