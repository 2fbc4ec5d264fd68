"""The catalog feed and the health check skip the middleware only pages need (edge/handler.py); pages keep it all.

Through config.wsgi.application, as the web process serves requests (the web_client fixture).
"""

import pytest
from django.conf import settings
from django.contrib.sessions.middleware import SessionMiddleware
from django.middleware.csrf import CsrfViewMiddleware

pytestmark = pytest.mark.django_db


@pytest.fixture
def page_middleware_calls(monkeypatch):
    """The paths whose requests went through the session and CSRF middleware."""
    seen = []
    session, csrf = SessionMiddleware.process_request, CsrfViewMiddleware.process_view

    def session_seen(self, request):
        seen.append(("session", request.path))
        return session(self, request)

    def csrf_seen(self, request, *args):
        seen.append(("csrf", request.path))
        return csrf(self, request, *args)

    monkeypatch.setattr(SessionMiddleware, "process_request", session_seen)
    monkeypatch.setattr(CsrfViewMiddleware, "process_view", csrf_seen)
    return seen


def test_feed_and_health_requests_go_without_sessions_or_csrf(web_client, three_apps, page_middleware_calls):
    for path in ("/catalog/v1/apps", "/catalog/v1/apps/alpha", "/catalog/v1/apps/no-such-app", "/healthz"):
        response = web_client.get(path)
        assert response.status_code in (200, 404)
        assert "Set-Cookie" not in response and "Cookie" not in response.get("Vary", "")
    assert page_middleware_calls == []


def test_the_feed_keeps_every_other_middleware(web_client, three_apps):
    response = web_client.get("/catalog/v1/apps/alpha")
    assert response.status_code == 200
    assert response["X-Content-Type-Options"] == "nosniff"  # edge/headers.py
    assert response["Access-Control-Allow-Origin"] == "*"
    unknown_host = web_client.get("/catalog/v1/apps/alpha", headers={"host": "elsewhere.example"})
    assert unknown_host.status_code in (400, 404)  # host routing and the Host check still decide


def test_pages_still_go_through_sessions_and_csrf(web_client, page_middleware_calls):
    web_client.get("/admin/login/")
    refused = web_client.post("/admin/login/", {"username": "ada", "password": "x"})  # no CSRF token
    assert refused.status_code == 403
    assert ("session", "/admin/login/") in page_middleware_calls
    assert ("csrf", "/admin/login/") in page_middleware_calls


def test_only_middleware_that_is_listed_is_skipped():
    assert set(settings.LEAN_PATHS_SKIP_MIDDLEWARE) <= set(settings.MIDDLEWARE)
