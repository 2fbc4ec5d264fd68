"""The chat widget on an account's white-label domain: its URLs there, and only its own widgets served there."""

import re

import pytest

from automations import services
from interfaces.models import WhiteLabelDomain

pytestmark = pytest.mark.django_db

HOST = "chat.customer.example"


@pytest.fixture
def three_hosts(settings):
    settings.BASE_URL = "https://app.example.com"
    settings.HOOKS_URL = "https://hooks.example.com"
    settings.MCP_URL = "https://mcp.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com", "hooks.example.com", "mcp.example.com"]
    settings.SECURE_SSL_REDIRECT = False


def test_the_widget_url_is_on_the_accounts_domain_and_stays_the_same(three_hosts, owner, make_chat):
    WhiteLabelDomain.objects.create(owner=owner, domain=HOST)
    automation, key = make_chat()
    assert services.chat_widget_url(automation) == f"https://{HOST}/webchat/{key}"
    assert services.chat_widget_url(automation) == services.chat_widget_url(automation)


def test_the_domain_serves_its_accounts_widget_page_script_and_messages(client, three_hosts, owner, make_chat):
    WhiteLabelDomain.objects.create(owner=owner, domain=HOST)
    _, key = make_chat()
    page = client.get(f"/webchat/{key}", HTTP_HOST=HOST)
    assert page.status_code == 200
    token = re.search(r'data-token="([^"]+)"', page.content.decode()).group(1)
    assert client.get(f"/webchat/embed.js?key={key}", HTTP_HOST=HOST).status_code == 200
    sent = client.post(
        f"/webchat/{key}/messages",
        {"text": "hi"},
        content_type="application/json",
        headers={"X-Chat-Token": token},
        HTTP_HOST=HOST,
    )
    assert sent.status_code == 201
    poll = client.get(f"/webchat/{key}/messages", headers={"X-Chat-Token": token}, HTTP_HOST=HOST)
    assert [m["text"] for m in poll.json()["messages"]] == ["hi"]


def test_another_accounts_widget_is_as_never_issued_there(client, three_hosts, owner, another_account, make_chat):
    WhiteLabelDomain.objects.create(owner=owner, domain=HOST)
    _, key = make_chat(user=another_account)
    token = re.search(
        r'data-token="([^"]+)"', client.get(f"/webchat/{key}", HTTP_HOST="app.example.com").content.decode()
    ).group(1)
    assert client.get(f"/webchat/{key}", HTTP_HOST=HOST).status_code == 404
    assert client.get(f"/webchat/embed.js?key={key}", HTTP_HOST=HOST).status_code == 404
    headers = {"X-Chat-Token": token}
    assert client.get(f"/webchat/{key}/messages", headers=headers, HTTP_HOST=HOST).status_code == 404
    assert (
        client.post(
            f"/webchat/{key}/messages", {"text": "x"}, content_type="application/json", headers=headers, HTTP_HOST=HOST
        ).status_code
        == 404
    )
