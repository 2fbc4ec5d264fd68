"""Connecting an oauth_v2 app through its own sign-in page, and its tokens afterwards, through Django's test client
against a local app on loopback (tests/local_oauth.py): every transition, failure paths first."""

import html
import json
import logging
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.test import Client

from automations import engine
from automations import services as automation_services
from automations.models import Run
from catalog.models import App
from conftest import app_doc
from connections import keys, oauth, services
from connections.models import Connection
from mcp_server.tools import builder
from tests import local_oauth

pytestmark = pytest.mark.django_db

PAGE = "/account/connections"
CALLBACK = "/account/connections/oauth/callback"


@pytest.fixture
def acorn(settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True  # the app listens on 127.0.0.1
    with local_oauth.running() as app:
        yield app


@pytest.fixture
def catalog(make_catalog, acorn):
    make_catalog(app_doc("acorn-crm", **local_oauth.catalog_entry(acorn.base)))
    return App.objects.get(slug="acorn-crm")


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def text(response) -> str:
    return html.unescape(response.content.decode())


def begin(client, label="Sales team"):
    response = client.post(f"{PAGE}/new", {"app": "acorn-crm", "label": label})
    assert response.status_code == 302, text(response)[:500]
    return response


def back_from_the_app(client, begun) -> tuple[str, object]:
    """Follow the redirect to the app's sign-in page as a browser would; the callback path it sends the owner back
    to, and our answer to it."""
    answer = httpx.get(begun["Location"], follow_redirects=False, trust_env=False)
    assert answer.status_code == 302, answer.text
    back = answer.headers["location"]
    assert back.startswith(django_settings.BASE_URL + CALLBACK + "?")
    path = back[len(django_settings.BASE_URL) :]
    return path, client.get(path)


def connect(client) -> Connection:
    _, response = back_from_the_app(client, begin(client))
    assert response.status_code == 302, text(response)[:500]
    return Connection.objects.get()


def run_action(owner, connection) -> Run:
    step = local_oauth.create_lead_step(connection.pk)
    automation = automation_services.create_automation(
        owner=owner, name="Leads", definition={"trigger": {"type": "webhook"}, "steps": [step]}
    )
    run = Run.objects.create(
        automation=automation,
        definition=automation.definition,
        source="webhook",
        status="queued",
        trigger={"body": {"email": "ada@example.com"}},
    )
    engine.advance(run)
    return run


def test_a_callback_whose_state_this_session_did_not_begin_makes_nothing(signed_in, catalog, acorn):
    begun = begin(signed_in)
    state = parse_qs(urlsplit(begun["Location"]).query)["state"][0]
    for query in ("code=x&state=forged", "code=x", f"code=x&state={state}x", "state=%00&code=%00"):
        response = signed_in.get(f"{CALLBACK}?{query}")
        assert response.status_code == 400
        assert "This sign-in was not started here" in text(response)
    assert not Connection.objects.exists() and acorn.token_requests == []


def test_a_callback_carried_to_another_account_makes_nothing(signed_in, catalog, acorn, another_account):
    path, _ = back_from_the_app(Client(), begin(signed_in))  # the redirect, but not followed by this session
    other = Client()
    other.force_login(another_account)
    response = other.get(path)
    assert response.status_code == 400 and "This sign-in was not started here" in text(response)
    assert not Connection.objects.exists()


def test_a_replayed_callback_makes_nothing_more(signed_in, catalog, acorn):
    path, first = back_from_the_app(signed_in, begin(signed_in))
    assert first.status_code == 302
    again = signed_in.get(path)
    assert again.status_code == 400 and "already used" in text(again)
    assert Connection.objects.count() == 1


def test_an_expired_state_makes_nothing(signed_in, catalog, acorn):
    begun = begin(signed_in)
    session = signed_in.session
    for pending in session[oauth.SESSION_KEY].values():
        pending["expires"] = time.time() - 1
    session.save()
    answer = httpx.get(begun["Location"], follow_redirects=False, trust_env=False)
    response = signed_in.get(answer.headers["location"][len(django_settings.BASE_URL) :])
    assert response.status_code == 400 and "took too long" in text(response)
    assert not Connection.objects.exists() and acorn.token_requests == []


def test_an_owner_who_denies_access_on_the_apps_page_is_told_and_nothing_is_made(signed_in, catalog, acorn):
    acorn.mode = "deny"
    _, response = back_from_the_app(signed_in, begin(signed_in))
    assert response.status_code == 400
    assert "You did not allow access on Acorn CRM's page: nothing was connected." in text(response)
    assert not Connection.objects.exists() and acorn.token_requests == []


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ((200, "application/json", b"<html>not json</html>"), "held no usable access token"),
        ((200, "application/json", b"[" * 5000 + b"]" * 5000), "held no usable access token"),
        ((200, "application/json", b'{"token_type": "Bearer"}'), "held no usable access token"),
        ((200, "application/json", b'{"access_token": {"nested": 1}}'), "held no usable access token"),
        ((200, "application/json", b'{"access_token": "' + b"a" * 200_000 + b'"}'), "held no usable access token"),
        ((400, "application/json", b'{"error": "invalid_grant", "error_description": "Bad\\u0000 code."}'), "Bad code"),
        ((500, "text/html", b"<h1>down</h1>"), "answered 500. Try again later."),
    ],
)
def test_a_hostile_token_endpoint_ends_in_a_clear_page_never_a_500(signed_in, catalog, acorn, answer, said):
    acorn.token_answer = answer
    _, response = back_from_the_app(signed_in, begin(signed_in))
    assert response.status_code == 400 and said in text(response)
    assert not Connection.objects.exists()


def test_the_token_endpoint_at_an_internal_address_is_refused_by_the_address_guard(signed_in, catalog, acorn, settings):
    begun = begin(signed_in)
    settings.HTTP_STEP_ALLOW_PRIVATE = False
    _, response = back_from_the_app(signed_in, begun)
    assert response.status_code == 400 and "inside this service's network" in text(response)
    assert not Connection.objects.exists() and acorn.token_requests == []


def test_an_app_whose_catalog_entry_lacks_its_oauth_client_says_so_and_makes_nothing(signed_in, make_catalog):
    make_catalog(app_doc("half-app", name="Half App", auth_type="oauth_v2", auth_config={"client_id": "x"}))
    page = text(signed_in.get(f"{PAGE}/new?app=half-app"))
    assert "does not set up yet" in page and 'type="submit">Connect<' not in page
    response = signed_in.post(f"{PAGE}/new", {"app": "half-app", "label": "Half"})
    assert response.status_code == 400 and "does not set up yet" in text(response)
    assert not Connection.objects.exists()


def test_an_owner_connects_through_the_apps_sign_in_page_with_pkce(signed_in, catalog, acorn, settings):
    shown = signed_in.get(f"{PAGE}/new?app=acorn-crm")
    page = text(shown)
    assert "sign in on Acorn CRM's own page" in page and 'name="credential"' not in page
    # Browsers apply form-action to where the form's answer redirects: the app's sign-in page, on its origin.
    assert f"form-action 'self' {acorn.base};" in shown["Content-Security-Policy"]
    begun = begin(signed_in)
    sent = urlsplit(begun["Location"])
    query = {name: values[0] for name, values in parse_qs(sent.query).items()}
    assert f"{sent.scheme}://{sent.netloc}{sent.path}" == f"{acorn.base}/oauth/authorize"
    assert query["redirect_uri"] == settings.BASE_URL + CALLBACK and query["client_id"] == local_oauth.CLIENT_ID
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["scope"] == "leads:write" and len(query["state"]) >= 40
    assert not Connection.objects.exists()  # nothing until the app gives tokens

    _, response = back_from_the_app(signed_in, begun)
    connection = Connection.objects.get()
    assert response.status_code == 302 and response["Location"] == f"{PAGE}/{connection.pk}"
    (exchange,) = acorn.token_requests
    assert exchange["grant_type"] == "authorization_code" and exchange["form"]["code_verifier"]
    assert exchange["form"]["client_secret"] == local_oauth.CLIENT_SECRET
    assert (connection.label, connection.auth_type, connection.state) == ("Sales team", "oauth_v2", "connected")
    (access,) = acorn.access_tokens
    (refresh,) = acorn.refresh_tokens
    assert keys.unseal(connection.credential_sealed) == access and keys.unseal(connection.refresh_sealed) == refresh
    assert access not in connection.credential_sealed and refresh not in connection.refresh_sealed
    assert connection.token_expires_at is not None and connection.credential_hint == ""

    shown = text(signed_in.get(response["Location"]))
    assert "Acorn CRM is connected as “Sales team”." in shown and "Sign in to Acorn CRM again" in shown
    assert access not in shown and refresh not in shown


def test_the_client_may_prove_itself_by_http_basic_with_its_secret_from_the_environment(
    signed_in, make_catalog, acorn, monkeypatch
):
    monkeypatch.setenv("ACORN_CLIENT_SECRET", local_oauth.CLIENT_SECRET)
    entry = local_oauth.catalog_entry(acorn.base, client_auth="basic", client_secret_env="ACORN_CLIENT_SECRET")
    del entry["auth_config"]["client_secret"]
    make_catalog(app_doc("acorn-crm", **entry))
    connect(signed_in)
    (exchange,) = acorn.token_requests
    assert exchange["basic"] and "client_secret" not in exchange["form"]


def test_an_action_uses_the_access_token(owner, signed_in, catalog, acorn):
    connection = connect(signed_in)
    run = run_action(owner, connection)
    assert run.status == "succeeded", run.error
    assert run.steps[0]["output"]["body"] == {"id": 1, "got": {"email": "ada@example.com"}}
    assert [call["live"] for call in acorn.calls] == [True]
    assert [request["grant_type"] for request in acorn.token_requests] == ["authorization_code"]


def test_a_token_about_to_expire_is_refreshed_before_the_call_and_the_new_refresh_token_kept(
    owner, signed_in, catalog, acorn
):
    acorn.expires_in = 30  # within the refresh margin: every use refreshes first
    connection = connect(signed_in)
    first_refresh = keys.unseal(connection.refresh_sealed)
    run = run_action(owner, connection)
    assert run.status == "succeeded", run.error
    assert [request["grant_type"] for request in acorn.token_requests] == ["authorization_code", "refresh_token"]
    assert acorn.token_requests[1]["form"]["refresh_token"] == first_refresh
    assert [call["live"] for call in acorn.calls] == [True]  # the call went out with the new token alone
    connection.refresh_from_db()
    assert keys.unseal(connection.refresh_sealed) != first_refresh and acorn.refresh_tokens[first_refresh] is False
    assert keys.unseal(connection.credential_sealed) == acorn.calls[0]["token"]


def test_a_token_the_app_refuses_is_refreshed_once_and_the_call_made_again(owner, signed_in, catalog, acorn):
    connection = connect(signed_in)
    acorn.expire_access_tokens()  # the app ended it early: our expiry still says it is good
    run = run_action(owner, connection)
    assert run.status == "succeeded", run.error
    assert [call["live"] for call in acorn.calls] == [False, True]
    assert [request["grant_type"] for request in acorn.token_requests] == ["authorization_code", "refresh_token"]
    connection.refresh_from_db()
    assert connection.state == "connected"


def test_a_refresh_the_app_refuses_marks_the_connection_and_the_owner_reads_why(owner, signed_in, catalog, acorn):
    connection = connect(signed_in)
    acorn.expire_access_tokens()
    acorn.revoke_refresh_tokens()
    run = run_action(owner, connection)
    assert run.status == "failed"
    assert "Acorn CRM refused to give access (400). It said: Refresh token revoked." in run.error
    connection.refresh_from_db()
    assert connection.state == "needs_reconnection"
    listed = text(signed_in.get(PAGE))
    assert "needs reconnection" in listed and "Refresh token revoked." in listed

    again = run_action(owner, connection)  # later runs fail before any call
    assert again.status == "failed" and "needs reconnection" in again.error
    assert len(acorn.calls) == 1


def test_an_app_that_cannot_renew_now_fails_the_step_and_leaves_the_connection_connected(
    owner, signed_in, catalog, acorn, monkeypatch
):
    monkeypatch.setattr(oauth, "REFRESH_ATTEMPTS", 1)  # no waiting between tries in this test
    connection = connect(signed_in)
    acorn.expire_access_tokens()
    acorn.token_answer = (503, "text/plain", b"maintenance")
    run = run_action(owner, connection)
    assert run.status == "failed" and "Acorn CRM's sign-in service answered 503. Try again later." in run.error
    connection.refresh_from_db()
    assert connection.state == "connected"


def test_reconnecting_signs_in_again_for_the_same_connection(owner, signed_in, catalog, acorn):
    connection = connect(signed_in)
    services.needs_reconnection(connection=connection, problem="Acorn CRM refused to give access (400).")
    shown = signed_in.get(f"{PAGE}/{connection.pk}")
    assert "Acorn CRM refused to give access (400)." in text(shown)
    assert f"form-action 'self' {acorn.base};" in shown["Content-Security-Policy"]

    begun = signed_in.post(f"{PAGE}/{connection.pk}/key")
    assert begun.status_code == 302 and begun["Location"].startswith(f"{acorn.base}/oauth/authorize?")
    _, response = back_from_the_app(signed_in, begun)
    assert response.status_code == 302 and response["Location"] == f"{PAGE}/{connection.pk}"
    renewed = Connection.objects.get()
    assert renewed.pk == connection.pk and (renewed.state, renewed.problem) == ("connected", "")
    assert keys.unseal(renewed.credential_sealed) != keys.unseal(connection.credential_sealed)
    shown = text(signed_in.get(response["Location"]))
    assert "Reconnected: Acorn CRM gave new access to “Sales team”." in shown
    assert run_action(owner, renewed).status == "succeeded"


def test_a_reconnection_begun_for_another_owners_connection_is_not_found(signed_in, catalog, acorn, another_account):
    other = Client()
    other.force_login(another_account)
    theirs = connect(other)
    assert signed_in.post(f"{PAGE}/{theirs.pk}/key").status_code == 404


def test_an_oauth_connection_is_deleted_with_its_tokens(signed_in, catalog, acorn):
    connection = connect(signed_in)
    response = signed_in.post(f"{PAGE}/{connection.pk}/delete")
    assert response.status_code == 302 and not Connection.objects.exists()


def test_the_tokens_are_never_in_a_page_the_log_an_export_admin_or_an_mcp_result(
    owner, signed_in, catalog, acorn, caplog, make_automation, django_user_model
):
    caplog.set_level(logging.DEBUG)
    staff_client = Client()
    staff_client.force_login(django_user_model.objects.create_superuser("staff", "staff@example.com", "pw-staff-1"))
    connection = connect(signed_in)
    acorn.expires_in = 1
    acorn.expire_access_tokens()
    assert run_action(owner, connection).status == "succeeded"  # refreshed on the 401
    connection.refresh_from_db()
    automation = make_automation([{"id": "use", "kind": "set_values", "values": {"connection": connection.pk}}])
    shown = [
        text(signed_in.get(PAGE)),
        text(signed_in.get(f"{PAGE}/{connection.pk}")),
        text(signed_in.get(f"/account/automations/{automation.pk}/export")),
        text(staff_client.get(f"/admin/connections/connection/{connection.pk}/change/")),
        json.dumps([run.steps for run in Run.objects.all()]) + " ".join(str(run.error) for run in Run.objects.all()),
        json.dumps(builder.list_connections(owner, {})),  # the MCP tool's result
        caplog.text,
    ]
    tokens = [*acorn.access_tokens, *acorn.refresh_tokens, local_oauth.CLIENT_SECRET]
    for seen in shown:
        for token in tokens:
            assert token not in seen
        assert connection.credential_sealed not in seen and connection.refresh_sealed not in seen


def test_rotation_reseals_the_refresh_token_too(signed_in, catalog, acorn, settings, new_key):
    connection = connect(signed_in)
    access, refresh = keys.unseal(connection.credential_sealed), keys.unseal(connection.refresh_sealed)
    old = list(settings.CONNECTION_KEYS)
    settings.CONNECTION_KEYS = [new_key, *old]
    call_command("rotate_connection_keys")
    settings.CONNECTION_KEYS = [new_key]  # the old key dropped
    connection.refresh_from_db()
    assert keys.unseal(connection.credential_sealed) == access and keys.unseal(connection.refresh_sealed) == refresh


def test_an_app_routing_by_account_names_the_signed_in_account_on_the_connection(make_catalog, acorn, signed_in):
    """A shared endpoint routes by the account a connection opens: for oauth_v2 it is read from the app's test call
    with the new token, as for a pasted key, never typed by the owner."""
    entry = local_oauth.catalog_entry(acorn.base)
    entry["auth_config"] |= {
        "test_request": {"method": "GET", "url": acorn.base + "/api/me"},
        "routing": {"body_path": "account.id", "account_path": "account.id"},
    }
    make_catalog(app_doc("acorn-crm", **entry))
    assert connect(signed_in).account_id == local_oauth.ACCOUNT


def test_an_app_whose_test_call_refuses_the_new_token_connects_nothing(make_catalog, acorn, signed_in):
    entry = local_oauth.catalog_entry(acorn.base)
    entry["auth_config"] |= {
        "test_request": {"method": "GET", "url": acorn.base + "/api/nobody"},
        "routing": {"body_path": "account.id", "account_path": "account.id"},
    }
    make_catalog(app_doc("acorn-crm", **entry))
    _, response = back_from_the_app(signed_in, begin(signed_in))
    assert response.status_code == 400 and not Connection.objects.exists(), text(response)[:300]
