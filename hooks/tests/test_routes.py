"""Which webhook requests the hooks process answers on its event loop, which go to Django, and that both look alike.

The hooks process answers a webhook path on HOOKS_URL's host itself, and
hands Django what Django would not route to a webhook (hooks/routes.py);
both take their security headers from edge/headers.py.
"""

import logging
from urllib.parse import urlsplit

import pytest

from automations import services as automation_services
from hooks.models import Delivery

pytestmark = pytest.mark.django_db(transaction=True)


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


@pytest.fixture
def handed_to_django(monkeypatch):
    """The paths of the requests the hooks process handed to Django (its fallback) rather than answered itself."""
    from config.asgi import application

    seen, fallback = [], application.fallback

    async def noting(scope, receive, send):
        seen.append(scope["path"])
        await fallback(scope, receive, send)

    monkeypatch.setattr(application, "fallback", noting)
    return seen


def test_webhook_paths_on_the_hooks_host_are_answered_on_the_loop(hooks_client, path, handed_to_django):
    for prefix in ("", "/webhook"):
        assert hooks_client.post(prefix + path, data=b'{"n": 1}', content_type="application/json").status_code == 200
    assert hooks_client.post("/automation-nope/extra", data=b"{}", content_type="application/json").status_code == 404
    assert handed_to_django == []
    assert Delivery.objects.count() == 2


def test_other_paths_go_to_django(hooks_client, handed_to_django):
    for other in ("/healthz", "/webservice-abc", "/automation", "/webhook/other"):
        hooks_client.get(other)
    assert handed_to_django == ["/healthz", "/webservice-abc", "/automation", "/webhook/other"]


def test_a_webhook_path_on_another_host_goes_to_django_and_answers_as_there(
    hooks_client, path, three_hosts, handed_to_django
):
    kwargs = {"data": b"1", "content_type": "text/plain", "secure": True}
    assert hooks_client.post(path, HTTP_HOST="hooks.example.com", **kwargs).status_code == 200
    answered = {
        host: hooks_client.post(path, HTTP_HOST=host, **kwargs).status_code
        for host in ("app.example.com", "mcp.example.com", "evil.example")
    }
    assert answered == {"app.example.com": 404, "mcp.example.com": 404, "evil.example": 400}
    assert handed_to_django == [path] * 3
    assert Delivery.objects.count() == 1


def test_a_webhook_in_maintenance_is_answered_on_the_loop_with_the_security_headers(
    hooks_client, path, handed_to_django
):
    from hooks.models import Maintenance

    Maintenance.objects.create(active=True)
    answer = hooks_client.post(path, data=b"1", content_type="text/plain")
    assert (answer.status_code, answer["X-Frame-Options"], answer["X-Content-Type-Options"]) == (503, "DENY", "nosniff")
    assert handed_to_django == []


def test_a_webhook_that_reaches_django_is_unavailable_there_not_a_miss(web_client, path, caplog):
    from edge.logs import RedactKeys

    answer = web_client.post(path + "%0Aforged", data=b'{"n": 1}', content_type="application/json")
    assert (answer.status_code, answer["Retry-After"]) == (503, "60")  # a sender retries a 5xx, not a 404
    assert not Delivery.objects.exists()
    [warned] = [record for record in caplog.records if record.name == "hooks.views"]
    RedactKeys().filter(warned)  # as every handler's filter does
    logged = warned.getMessage()
    key = path.removeprefix("/automation-")  # the whole key: a key may hold "-" itself
    assert "/automation-{key}" in logged and key not in logged
    assert "\n" not in logged  # the forged line break is escaped, as Django logs paths


def test_a_chunked_webhook_that_reaches_django_is_unavailable_there_not_a_411(web_client, path):
    answer = web_client.post(path, data=b"{}", content_type="application/json", HTTP_TRANSFER_ENCODING="chunked")
    assert answer.status_code == 503


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"SECURE_HSTS_SECONDS": 60, "SECURE_HSTS_INCLUDE_SUBDOMAINS": True, "SECURE_HSTS_PRELOAD": True},
        {"SECURE_REFERRER_POLICY": "no-referrer, strict-origin"},
        {"SECURE_REFERRER_POLICY": ("no-referrer", "origin")},
        {"SECURE_CROSS_ORIGIN_OPENER_POLICY": None, "SECURE_CONTENT_TYPE_NOSNIFF": False},
        {"X_FRAME_OPTIONS": "sameorigin"},
    ],
)
def test_the_one_place_sets_what_djangos_own_middleware_would(overrides, settings, rf):
    """edge/headers.py stands in for Django's middleware: held to what Django's own would add, to any answer."""
    from django.http import HttpResponse
    from django.middleware.clickjacking import XFrameOptionsMiddleware
    from django.middleware.security import SecurityMiddleware

    from edge.headers import security_headers

    for name, value in overrides.items():
        setattr(settings, name, value)
    for secure in (False, True):
        request = rf.get("/", secure=secure)
        response = HttpResponse()
        del response["Content-Type"]
        for middleware in (XFrameOptionsMiddleware, SecurityMiddleware):
            response = middleware(lambda request: None).process_response(request, response)
        assert dict(security_headers(secure)) == dict(response.items())


def test_a_path_exempt_from_the_https_redirect_is_answered_on_the_loop_whatever_the_key_before_it(
    hooks_client, make_automation, settings, handed_to_django, middleware_with
):
    exempt, redirected = (
        urlsplit(automation_services.hook_url(make_automation([], name=name))).path for name in ("exempt", "other")
    )
    with middleware_with(SECURE_SSL_REDIRECT=True, SECURE_REDIRECT_EXEMPT=[exempt.lstrip("/") + "$"]):
        assert hooks_client.post(redirected, data=b"1", content_type="text/plain").status_code == 301
        assert hooks_client.post(exempt, data=b"1", content_type="text/plain").status_code == 200
        assert hooks_client.post(redirected, data=b"1", content_type="text/plain").status_code == 301
    assert handed_to_django == [redirected, redirected]


def test_https_told_by_a_trusted_proxy_turns_hsts_on_for_its_route_alone(hooks_client, path, settings):
    settings.SECURE_HSTS_SECONDS = 60
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    told = hooks_client.post(path, data=b"1", content_type="text/plain", HTTP_X_FORWARDED_PROTO="https")
    plain = hooks_client.post(path, data=b"2", content_type="text/plain")
    assert (told.status_code, plain.status_code) == (200, 200)
    assert told["Strict-Transport-Security"] == "max-age=60" and "Strict-Transport-Security" not in plain


@pytest.fixture
def middleware_with():
    """Settings that Django's middleware reads once, when it is built: both processes' Django rebuild theirs."""
    from contextlib import contextmanager

    from django.test import override_settings

    from config.asgi import django_application
    from config.wsgi import application

    @contextmanager
    def overriding(**overrides):
        with override_settings(**overrides):
            for django in (application, django_application):
                django.load_middleware()
            yield
        for django in (application, django_application):
            django.load_middleware()

    return overriding


def test_requests_django_would_redirect_or_read_from_a_proxy_go_to_django(
    hooks_client, path, settings, handed_to_django, middleware_with
):
    with middleware_with(SECURE_SSL_REDIRECT=True):  # Django would redirect plain http
        assert hooks_client.post(path, data=b"1", content_type="text/plain").status_code == 301
        assert hooks_client.post(path, data=b"1", content_type="text/plain", secure=True).status_code == 200
    settings.USE_X_FORWARDED_HOST = True
    settings.ALLOWED_HOSTS = ["testserver"]
    answer = hooks_client.post(path, data=b"1", content_type="text/plain", HTTP_X_FORWARDED_HOST="elsewhere.example")
    assert answer.status_code == 400  # Django's answer to a host it does not allow
    assert handed_to_django == [path, path]


def test_requests_django_would_redirect_to_www_go_to_django(hooks_client, path, settings, handed_to_django):
    settings.PREPEND_WWW = True
    assert hooks_client.post(path, data=b"1", content_type="text/plain").status_code == 301
    assert handed_to_django == [path]


@pytest.fixture
def hsts(middleware_with):
    """HSTS on, in both processes' middleware."""
    with middleware_with(SECURE_HSTS_SECONDS=3600):
        yield


SECURITY_HEADERS = {
    "strict-transport-security",
    "x-content-type-options",
    "referrer-policy",
    "cross-origin-opener-policy",
    "x-frame-options",
}


@pytest.mark.parametrize("case", ["accepted", "miss", "preflight", "head", "challenge", "secret", "wrong method"])
def test_every_webhook_answer_carries_the_security_headers_of_djangos_answers(
    web_client, hooks_client, path, case, hsts
):
    request = {
        "accepted": ("POST", path, b'{"n": 1}', {}),
        "miss": ("POST", "/automation-unknown", b"{}", {}),
        "preflight": ("OPTIONS", path, b"", {"HTTP_ACCESS_CONTROL_REQUEST_HEADERS": "content-type"}),
        "head": ("HEAD", path, b"", {}),
        "challenge": ("POST", path, b'{"challenge": "c"}', {}),
        "secret": ("POST", path, b"{}", {"HTTP_X_HOOK_SECRET": "s"}),
        "wrong method": ("DELETE", path, b"", {}),
    }[case]
    method, sent_to, body, headers = request
    for secure in (False, True):
        hook = hooks_client.generic(method, sent_to, body, content_type="application/json", secure=secure, **headers)
        pages = [client.get("/healthz", secure=secure) for client in (web_client, hooks_client)]
        seen = [
            {name.lower(): value for name, value in answer.items() if name.lower() in SECURITY_HEADERS}
            for answer in (hook, *pages)
        ]
        assert seen[0] == seen[1] == seen[2]
        assert ("strict-transport-security" in seen[0]) is secure and seen[0]["x-frame-options"] == "DENY"


def post_logging_errors(hooks_client, path: str, caplog):
    """POST an empty JSON body with django.request's records in caplog: that logger does not propagate to the root."""
    logger = logging.getLogger("django.request")
    logger.addHandler(caplog.handler)
    try:
        return hooks_client.post(path, data=b"{}", content_type="application/json")
    finally:
        logger.removeHandler(caplog.handler)


def test_an_unexpected_error_is_a_logged_500_with_djangos_headers(hooks_client, path, monkeypatch, caplog):
    from hooks import services

    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(services, "new_delivery", broken)
    response = post_logging_errors(hooks_client, path, caplog)
    assert (response.status_code, response.content) == (500, b"")
    assert response["X-Frame-Options"] == "DENY"
    assert "Internal Server Error" in caplog.text


def test_a_cut_off_body_of_any_other_page_is_a_400_not_a_short_form(through, django_user_model):
    from hooks.tests.test_receive import Leaving

    django_user_model.objects.create_user("ada", password="pw-ada-12345")
    through.cookies["csrftoken"] = "c" * 32  # so that CSRF's check reads the form
    sent = b"username=ada&password=pw-ada-12345&next=/ad"  # 44 bytes of a login form that said 1,000
    response = through.post(
        "/admin/login/",
        content_type="application/x-www-form-urlencoded",
        CONTENT_LENGTH="1000",
        **{"wsgi.input": Leaving(sent)},
    )
    assert response.status_code == 400


def test_a_route_decision_that_fails_is_a_logged_500_with_the_security_headers(hooks_client, path, settings, caplog):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO",)  # malformed: Django's is_secure() raises
    response = post_logging_errors(hooks_client, path, caplog)
    assert (response.status_code, response.content, response["X-Frame-Options"]) == (500, b"", "DENY")
    assert "Internal Server Error" in caplog.text
    assert not Delivery.objects.exists()
