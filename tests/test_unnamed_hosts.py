"""Hosts the service does not name: whatever ALLOWED_HOSTS lets through, they never reach BASE_URL's routes.

A Host that is none of BASE_URL, HOOKS_URL and MCP_URL is an account's
white-label domain (its own form and chat pages, nothing else) or serves
nothing at all, even with ALLOWED_HOSTS=["*"] or extra names listed there.
"""

from urllib.parse import urlsplit

import pytest

from automations import services
from interfaces.models import WhiteLabelDomain

pytestmark = pytest.mark.django_db

DOMAIN = "forms.customer.example"
FORM = {"type": "form", "fields": [{"name": "email", "type": "email"}]}
CHAT = {"type": "chat"}


@pytest.fixture
def any_host(settings):
    settings.BASE_URL = "https://app.example.com"
    settings.HOOKS_URL = "https://hooks.example.com"
    settings.MCP_URL = "https://mcp.example.com"
    settings.ALLOWED_HOSTS = ["*"]
    settings.SECURE_SSL_REDIRECT = False


def _automation(user, trigger):
    return services.create_automation(
        owner=user, name="A page", definition={"trigger": trigger, "steps": []}, enabled=True
    )


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@pytest.fixture
def pages(any_host, owner, another_account):
    """The owner's domain, and paths of: a form and a chat widget of each account, a webhook URL."""
    WhiteLabelDomain.objects.create(owner=owner, domain=DOMAIN)
    webhook = services.create_automation(
        owner=owner, name="Hook", definition={"trigger": {"type": "webhook"}, "steps": []}
    )
    return {
        "own form": _path(services.form_url(_automation(owner, FORM))),
        "own chat": _path(services.chat_widget_url(_automation(owner, CHAT))),
        "other form": _path(services.form_url(_automation(another_account, FORM))),
        "other chat": _path(services.chat_widget_url(_automation(another_account, CHAT))),
        "webhook": _path(services.hook_url(webhook)),
    }


# Paths of the three role hosts a stray Host must never reach.
ROLE_PATHS = [
    "/",
    "/admin/",
    "/admin/login/",
    "/login",
    "/signup",
    "/catalog/v1/apps",
    "/healthz",
    "/automation?uuid=00000000-0000-0000-0000-000000000000",
    "/moderation?queue=x",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-protected-resource",
    "/mcp",
]


@pytest.mark.parametrize("path", ROLE_PATHS)
@pytest.mark.parametrize("host", ["evil.example", DOMAIN, "app.example.com.evil.example", "app.example.com:8443"])
def test_a_host_the_service_does_not_name_never_reaches_a_role_hosts_route(client, pages, three_apps, host, path):
    response = client.get(path, HTTP_HOST=host)
    assert response.status_code == 404, (host, path, response.status_code)
    assert b"Django administration" not in response.content and b"csrfmiddlewaretoken" not in response.content


@pytest.mark.parametrize("host", ["evil.example", DOMAIN])
def test_another_accounts_form_and_chat_are_as_never_issued(client, pages, host):
    for name in ("other form", "other chat", "webhook"):
        response = client.get(pages[name], HTTP_HOST=host)
        assert response.status_code == 404, (host, name)
        assert b'name="email"' not in response.content and b"data-token" not in response.content


def test_a_white_label_host_serves_its_own_accounts_pages_under_any_allowed_hosts(client, pages):
    assert client.get(pages["own form"], HTTP_HOST=DOMAIN).status_code == 200
    assert client.get(pages["own chat"], HTTP_HOST=DOMAIN).status_code == 200
    assert client.get(f"{pages['other form']}", HTTP_HOST=DOMAIN).content == (
        client.get("/form/" + "A" * 32, HTTP_HOST=DOMAIN).content
    )  # the unavailable page, as for a key never issued


def test_a_host_that_is_no_accounts_domain_serves_nobodys_pages(client, pages):
    for name in ("own form", "own chat", "other form", "other chat"):
        assert client.get(pages[name], HTTP_HOST="evil.example").status_code == 404, name


@pytest.mark.django_db(transaction=True)  # the hooks process looks keys up and stores rows in threads of its own
def test_the_role_hosts_still_answer_their_own_paths(client, hooks_client, pages, three_apps):
    assert client.get("/catalog/v1/apps", HTTP_HOST="app.example.com").status_code == 200
    assert client.get("/admin/", HTTP_HOST="app.example.com").status_code == 302  # to admin's sign-in
    assert client.get(pages["other form"], HTTP_HOST="app.example.com").status_code == 200
    assert hooks_client.get(pages["webhook"], HTTP_HOST="hooks.example.com").status_code == 200
    assert client.get("/healthz", HTTP_HOST="mcp.example.com").content == b"ok"


def test_listing_a_white_label_domain_in_allowed_hosts_changes_nothing(client, pages, settings):
    settings.ALLOWED_HOSTS = ["app.example.com", "hooks.example.com", "mcp.example.com", DOMAIN]
    assert client.get(pages["other form"], HTTP_HOST=DOMAIN).status_code == 404
    assert client.get("/admin/", HTTP_HOST=DOMAIN).status_code == 404
    assert client.get(pages["own form"], HTTP_HOST=DOMAIN).status_code == 200


def test_a_host_allowed_hosts_refuses_still_gets_400(client, pages, settings):
    settings.ALLOWED_HOSTS = ["app.example.com", "hooks.example.com", "mcp.example.com"]
    assert client.get("/admin/", HTTP_HOST="evil.example").status_code == 400
    assert client.get(pages["own form"], HTTP_HOST=DOMAIN).status_code == 200
