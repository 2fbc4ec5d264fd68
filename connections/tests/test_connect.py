"""Connecting an app by its auth_type: a pasted key is checked by the app's test call and saved only when accepted."""

import logging
import threading

import pytest

from catalog.models import App
from conftest import app_doc
from connections import checking, keys, services
from connections.models import Connection
from connections.tests.fixtures import GOOD_KEY
from tests.local_apps import QuietHandler, serving

pytestmark = pytest.mark.django_db


def test_a_key_the_app_refuses_is_not_saved_and_the_apps_message_is_said(owner, acorn_app, acorn_api):
    with pytest.raises(checking.Refused) as refused:
        services.connect(owner=owner, app=acorn_app, label="Sales", credential="sk-wrong-key-0000")
    assert str(refused.value) == (
        "Acorn CRM refused the key (401). It said: Invalid API key. Make a new one under Settings > API."
    )
    assert not Connection.objects.exists()
    assert acorn_api[1] == [{"path": "/v1/me", "authorization": "Bearer sk-wrong-key-0000"}]


def test_the_test_call_to_an_internal_address_is_refused_by_the_address_guard(owner, acorn_app, acorn_api, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = False
    with pytest.raises(checking.Refused, match="inside this service's network"):
        services.connect(owner=owner, app=acorn_app, label="Sales", credential=GOOD_KEY)
    assert not Connection.objects.exists()
    assert acorn_api[1] == []  # nothing reached the server


def test_an_app_that_does_not_answer_in_time_saves_nothing(owner, make_catalog, settings):
    class Held(QuietHandler):
        stopping = threading.Event()

        def do_GET(self):
            self.stopping.wait(10)

    settings.HTTP_STEP_ALLOW_PRIVATE = True
    settings.CONNECTION_CHECK_TIMEOUT_SECONDS = 1
    with serving(Held) as base:
        make_catalog(app_doc("slow-app", auth_type="api_key", auth_config={"test_request": {"url": f"{base}/me"}}))
        with pytest.raises(checking.Refused, match="did not answer within 1 seconds"):
            services.connect(owner=owner, app=App.objects.get(slug="slow-app"), label="Slow", credential=GOOD_KEY)
    assert not Connection.objects.exists()


def test_an_app_that_cannot_be_reached_saves_nothing(owner, make_catalog, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    make_catalog(app_doc("gone-app", auth_type="api_key", auth_config={"test_request": {"url": "http://127.0.0.1:9/"}}))
    with pytest.raises(checking.Refused, match="could not be reached"):
        services.connect(owner=owner, app=App.objects.get(slug="gone-app"), label="Gone", credential=GOOD_KEY)
    assert not Connection.objects.exists()


def test_a_key_the_app_accepts_is_saved_sealed_and_checked(owner, acorn_app, acorn_api):
    connection = services.connect(owner=owner, app=acorn_app, label=" Sales ", credential=f" {GOOD_KEY} ")
    row = Connection.objects.get(pk=connection.pk)
    assert (row.label, row.auth_type, row.state) == ("Sales", "api_key", Connection.State.CONNECTED)
    assert keys.unseal(row.credential_sealed) == GOOD_KEY and GOOD_KEY not in row.credential_sealed
    assert row.credential_hint == "…good" and row.last_checked_at is not None


def test_a_test_request_that_names_no_placeholder_sends_the_key_as_a_bearer_token(
    owner, make_catalog, acorn_api, settings
):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    base, seen = acorn_api
    make_catalog(app_doc("bare-app", auth_type="api_key", auth_config={"test_request": {"url": f"{base}/v1/me"}}))
    services.connect(owner=owner, app=App.objects.get(slug="bare-app"), label="Bare", credential=GOOD_KEY)
    assert seen == [{"path": "/v1/me", "authorization": f"Bearer {GOOD_KEY}"}]


def test_an_app_that_echoes_the_key_in_its_refusal_never_shows_it(owner, make_catalog, settings):
    class Echo(QuietHandler):
        def do_GET(self):
            data = f"unknown key {self.headers['Authorization'][7:]}".encode()
            self.send_response(403)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    settings.HTTP_STEP_ALLOW_PRIVATE = True
    with serving(Echo) as base:
        make_catalog(app_doc("echo-app", name="Echo", auth_type="api_key", auth_config={"test_request": {"url": base}}))
        with pytest.raises(checking.Refused) as refused:
            services.connect(owner=owner, app=App.objects.get(slug="echo-app"), label="E", credential="sk-echoed-1234")
    assert str(refused.value) == "Echo refused the key (403). It said: unknown key …"


def test_a_refusal_nested_thousands_deep_is_said_without_its_words_and_saves_nothing(owner, make_catalog, settings):
    class Deep(QuietHandler):
        def do_GET(self):
            data = b'{"error": ' * 5000 + b"1" + b"}" * 5000
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    settings.HTTP_STEP_ALLOW_PRIVATE = True
    with serving(Deep) as base:
        make_catalog(app_doc("deep-app", name="Deep", auth_type="api_key", auth_config={"test_request": {"url": base}}))
        with pytest.raises(checking.Refused) as refused:
            services.connect(owner=owner, app=App.objects.get(slug="deep-app"), label="D", credential="sk-deep-1234")
    assert str(refused.value).startswith("Deep refused the key (401).")
    assert not Connection.objects.exists()


def test_an_api_key_app_without_a_test_call_saves_the_key_unchecked(owner, make_catalog):
    make_catalog(app_doc("plain-app", auth_type="api_key", auth_config={}))
    connection = services.connect(owner=owner, app=App.objects.get(slug="plain-app"), label="P", credential="k" * 20)
    assert connection.last_checked_at is None and keys.unseal(connection.credential_sealed) == "k" * 20


def test_an_app_of_auth_type_none_connects_without_a_credential(owner, plain_apps):
    connection = services.connect(owner=owner, app=plain_apps["none"], label="Public", credential="ignored")
    assert (connection.credential_sealed, connection.credential_hint) == ("", "")


@pytest.mark.parametrize("auth_type", ["managed_auth", "token_mint"])
def test_the_stand_ins_keep_a_pasted_token_as_an_api_key(owner, plain_apps, auth_type):
    connection = services.connect(owner=owner, app=plain_apps[auth_type], label="T", credential="tok-stand-in-5678")
    assert connection.auth_type == auth_type and keys.unseal(connection.credential_sealed) == "tok-stand-in-5678"


def test_an_oauth_app_is_not_connected_without_its_sign_in_page(owner, plain_apps):
    with pytest.raises(services.NotConnectable, match="its own sign-in page"):
        services.connect(owner=owner, app=plain_apps["oauth_v2"], label="O")
    assert not Connection.objects.exists()


def test_reconnecting_replaces_the_key_and_clears_the_problem(owner, acorn_app, acorn_api):
    connection = services.connect(owner=owner, app=acorn_app, label="Sales", credential=GOOD_KEY)
    services.needs_reconnection(connection=connection, problem="The key was revoked.")
    with pytest.raises(checking.Refused):
        services.reconnect(connection=Connection.objects.get(pk=connection.pk), credential="sk-bad-000000")
    assert Connection.objects.get(pk=connection.pk).state == Connection.State.NEEDS_RECONNECTION
    services.reconnect(connection=Connection.objects.get(pk=connection.pk), credential=GOOD_KEY)
    row = Connection.objects.get(pk=connection.pk)
    assert (row.state, row.problem) == (Connection.State.CONNECTED, "")


def test_the_key_never_reaches_the_log(owner, acorn_app, caplog):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(checking.Refused):
        services.connect(owner=owner, app=acorn_app, label="Sales", credential="sk-never-logged-1111")
    services.connect(owner=owner, app=acorn_app, label="Sales", credential=GOOD_KEY)
    assert "sk-never-logged-1111" not in caplog.text and GOOD_KEY not in caplog.text


def test_a_key_sent_in_the_query_string_never_reaches_the_log(owner, make_catalog, acorn_api, settings, caplog):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    base, seen = acorn_api
    test_request = {"url": f"{base}/v1/me", "query": {"api_key": "{{api_key}}"}}
    make_catalog(app_doc("query-app", auth_type="api_key", auth_config={"test_request": test_request}))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(checking.Refused):
        services.connect(owner=owner, app=App.objects.get(slug="query-app"), label="Q", credential="sk-in-query-2222")
    assert seen[0]["path"] == "/v1/me?api_key=sk-in-query-2222"
    assert "sk-in-query-2222" not in caplog.text
