"""The webhook entry in front of Django (hooks/wsgi.py): what it answers itself, what it hands on, and that both look alike."""
import logging
from urllib.parse import urlsplit

import pytest
from django.test import Client

from automations import services as automation_services
from hooks import receiver
from hooks.models import Delivery
from hooks.tests.conftest import transaction_of_the_test_kept
from hooks.wsgi import WebhookEntry

pytestmark = pytest.mark.django_db


def handed_to_django(environ, start_response):
    start_response("299 Handed On", [])
    return [b"django"]


def call(environ):
    started = []
    with transaction_of_the_test_kept():
        body = b"".join(WebhookEntry(handed_to_django)(environ, lambda status, headers, exc_info=None: started.append(status)))
    return started[0], body


@pytest.fixture
def path(make_automation):
    automation = make_automation([{"id": "keep", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}}])
    return urlsplit(automation_services.hook_url(automation)).path


@pytest.fixture
def three_hosts(settings):
    settings.BASE_URL = "https://app.example.com"
    settings.HOOKS_URL = "https://hooks.example.com"
    settings.MCP_URL = "https://mcp.example.com"
    settings.ALLOWED_HOSTS = ["app.example.com", "hooks.example.com", "mcp.example.com"]


def test_webhook_paths_are_answered_without_django(rf, path):
    for prefix in ("", "/webhook"):
        status, body = call(rf.post(prefix + path, data=b'{"n": 1}', content_type="application/json").environ)
        assert (status, body) == ("200 OK", b"")
    status, _ = call(rf.post("/automation-nope/extra", data=b"{}", content_type="application/json").environ)
    assert status == "404 Not Found"
    assert Delivery.objects.count() == 2


def test_other_paths_go_to_django(rf):
    for other in ("/healthz", "/catalog/v1/apps", "/webservice-abc", "/automation", "/webhook/other"):
        assert call(rf.get(other).environ)[0] == "299 Handed On", other


def test_only_the_hooks_host_is_answered_here(rf, path, three_hosts):
    assert call(rf.post(path, data=b"1", content_type="text/plain", HTTP_HOST="hooks.example.com").environ)[0] == "200 OK"
    for host in ("app.example.com", "mcp.example.com", "evil.example"):
        assert call(rf.post(path, data=b"1", content_type="text/plain", HTTP_HOST=host).environ)[0] == "299 Handed On", host
    assert Delivery.objects.count() == 1


def test_a_host_not_allowed_goes_to_django(rf, path, settings):
    settings.ALLOWED_HOSTS = ["elsewhere.example"]
    assert call(rf.post(path, data=b"1", content_type="text/plain").environ)[0] == "299 Handed On"


def test_requests_django_would_treat_specially_go_to_django(rf, path, settings):
    environ = rf.post(path, data=b"1", content_type="text/plain").environ
    assert call({**environ, "SCRIPT_NAME": "/mounted"})[0] == "299 Handed On"
    settings.USE_X_FORWARDED_HOST = True
    assert call({**environ, "HTTP_X_FORWARDED_HOST": "testserver"})[0] == "299 Handed On"
    settings.USE_X_FORWARDED_HOST = False
    settings.SECURE_SSL_REDIRECT = True  # Django would redirect plain http
    assert call(environ)[0] == "299 Handed On"
    assert call({**environ, "wsgi.url_scheme": "https"})[0] == "200 OK"
    assert Delivery.objects.count() == 1


@pytest.mark.parametrize("case", ["accepted", "miss", "preflight", "challenge", "wrong method"])
def test_the_entry_and_djangos_view_send_the_same_headers(entry_client, path, case, settings):
    settings.SECURE_HSTS_SECONDS = 3600
    request = {
        "accepted": ("POST", path, b'{"n": 1}'),
        "miss": ("POST", "/automation-unknown", b"{}"),
        "preflight": ("OPTIONS", path, b""),
        "challenge": ("POST", path, b'{"challenge": "c"}'),
        "wrong method": ("DELETE", path, b""),
    }[case]
    answers = []
    for client in (entry_client, Client()):
        for secure in (False, True):
            response = client.generic(*request, content_type="application/json", secure=secure,
                                      HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type")
            headers = {name.lower(): value for name, value in response.items() if name.lower() != "x-flowgate-delivery-id"}
            answers.append((response.status_code, response.content, headers))
    entry_plain, entry_secure, django_plain, django_secure = answers
    assert entry_plain == django_plain
    assert entry_secure == django_secure
    assert "strict-transport-security" in entry_secure[2]


def test_an_unexpected_error_is_a_logged_500(entry_client, path, monkeypatch, caplog):
    def broken(environ, key):
        raise RuntimeError("boom")

    monkeypatch.setattr(receiver, "receive", broken)
    logger = logging.getLogger("django.request")  # it does not propagate to the root logger caplog watches
    logger.addHandler(caplog.handler)
    try:
        response = entry_client.post(path, data=b"{}", content_type="application/json")
    finally:
        logger.removeHandler(caplog.handler)
    assert response.status_code == 500
    assert "Internal Server Error" in caplog.text


def test_a_cut_off_body_of_any_other_page_is_a_400_not_a_short_form(entry_client, django_user_model):
    from hooks.tests.test_receive import Leaving

    django_user_model.objects.create_user("ada", password="pw-ada-12345")
    entry_client.cookies["csrftoken"] = "c" * 32  # so that CSRF's check reads the form
    sent = b"username=ada&password=pw-ada-12345&next=/ad"  # 44 bytes of a login form that said 1,000
    response = entry_client.post("/admin/login/", content_type="application/x-www-form-urlencoded",
                                 CONTENT_LENGTH="1000", **{"wsgi.input": Leaving(sent)})
    assert response.status_code == 400
