"""Fixtures of connections (a plugin of the root conftest.py): an api_key app whose test call reaches a local server,
and apps of the other auth_types."""

import json
from http.server import BaseHTTPRequestHandler

import pytest
from cryptography.fernet import Fernet

from conftest import app_doc
from tests.local_apps import QuietHandler, serving

GOOD_KEY = "sk-live-acorn-4242-good"


def acorn_handler(good_key: str = GOOD_KEY) -> type[BaseHTTPRequestHandler]:
    """Acorn's API: GET /v1/me answers 200 to Bearer good_key, 401 with its own message to any other."""

    class Acorn(QuietHandler):
        seen: list[dict] = []

        def do_GET(self):
            self.seen.append({"path": self.path, "authorization": self.headers.get("Authorization", "")})
            if self.headers.get("Authorization") == f"Bearer {good_key}":
                status, body = 200, {"id": "user-1"}
            else:
                status, body = 401, {"error": {"message": "Invalid API key. Make a new one under Settings > API."}}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Acorn


@pytest.fixture
def acorn_api():
    """Acorn's API on 127.0.0.1, reachable because HTTP_STEP_ALLOW_PRIVATE is on in the tests that use it."""
    handler = acorn_handler()
    handler.seen = []
    with serving(handler) as base:
        yield base, handler.seen


@pytest.fixture
def acorn_app(make_catalog, acorn_api, settings):
    """The api_key app "Acorn CRM", its test call on the local server."""
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    base, _ = acorn_api
    test_request = {"method": "GET", "url": f"{base}/v1/me", "headers": {"Authorization": "Bearer {{api_key}}"}}
    make_catalog(
        app_doc("acorn-crm", name="Acorn CRM", auth_type="api_key", auth_config={"test_request": test_request})
    )
    from catalog.models import App

    return App.objects.get(slug="acorn-crm")


@pytest.fixture
def plain_apps(make_catalog):
    """Apps with no test call: one of each auth_type besides api_key."""
    make_catalog(
        app_doc("open-data", name="Open Data", auth_type="none", auth_config={}),
        app_doc("broker-app", name="Broker App", auth_type="managed_auth", auth_config={}),
        app_doc("mint-app", name="Mint App", auth_type="token_mint", auth_config={}),
        app_doc("oauth-app", name="OAuth App", auth_type="oauth_v2"),
    )
    from catalog.models import App

    return {app.auth_type: app for app in App.objects.all()}


@pytest.fixture
def new_key():
    return Fernet.generate_key().decode()


@pytest.fixture
def birch(settings):
    """Birch Forms (connections/tests/other_app.py) serving on loopback, reachable with HTTP_STEP_ALLOW_PRIVATE on:
    its state."""
    from connections.tests.other_app import birch_api

    settings.HTTP_STEP_ALLOW_PRIVATE = True
    with birch_api() as state:
        yield state
