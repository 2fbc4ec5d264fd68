"""/account/connections: an owner's connected apps, connecting one, renaming, reconnecting and deleting; failure
paths first."""

import json
import logging

import pytest
from django.test import Client

from automations import selectors
from connections import keys, services
from connections.models import Connection
from connections.tests.fixtures import GOOD_KEY

pytestmark = pytest.mark.django_db

PAGE = "/account/connections"


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def theirs(another_account, plain_apps):
    return services.connect(owner=another_account, app=plain_apps["token_mint"], label="Theirs", credential="t" * 16)


@pytest.fixture
def mine(owner, acorn_app):
    return services.connect(owner=owner, app=acorn_app, label="Sales", credential=GOOD_KEY)


def uses(connection_id: int) -> list[dict]:
    """Steps naming the connection: until app actions exist, any object in a definition with the member counts."""
    return [{"id": "crm", "kind": "set_values", "values": {"connection": connection_id}}]


def pages_of(connection_id: int) -> list[tuple[str, str]]:
    base = f"{PAGE}/{connection_id}"
    return [
        ("get", base),
        ("get", f"{base}/delete"),
        ("post", f"{base}/name"),
        ("post", f"{base}/key"),
        ("post", f"{base}/delete"),
    ]


def test_a_signed_out_visitor_is_sent_to_sign_in(client, theirs):
    for method, path in [("get", PAGE), ("get", f"{PAGE}/new"), *pages_of(theirs.pk)]:
        response = getattr(client, method)(path)
        assert response.status_code == 302 and response["Location"].startswith("/login?next="), path
    assert Connection.objects.get(pk=theirs.pk).label == "Theirs"


def test_another_owners_connection_is_not_found_on_every_page(signed_in, theirs):
    data = {"rename-label": "Mine now", "reconnect-credential": "x" * 16, "turn_off": "1"}
    for method, path in pages_of(theirs.pk):
        response = getattr(signed_in, method)(path, data) if method == "post" else signed_in.get(path)
        assert response.status_code == 404, path
    assert "Theirs" not in signed_in.get(PAGE).content.decode()
    row = Connection.objects.get(pk=theirs.pk)
    assert (row.label, keys.unseal(row.credential_sealed)) == ("Theirs", "t" * 16)


def test_a_change_without_the_csrf_token_is_refused(owner, mine):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post(f"{PAGE}/{mine.pk}/delete").status_code == 403
    assert client.post(f"{PAGE}/new", {"app": "acorn-crm", "label": "x", "credential": GOOD_KEY}).status_code == 403
    assert Connection.objects.count() == 1


def test_a_key_the_app_refuses_is_not_saved_and_its_message_is_shown(signed_in, acorn_app):
    response = signed_in.post(f"{PAGE}/new", {"app": "acorn-crm", "label": "Sales", "credential": "sk-wrong-9999"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Acorn CRM refused the key (401). It said: Invalid API key. Make a new one under Settings &gt; API." in html
    assert "sk-wrong-9999" not in html and 'aria-invalid="true"' in html
    assert not Connection.objects.exists()


def test_the_test_call_to_an_internal_address_is_refused_on_the_page(signed_in, acorn_app, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = False
    response = signed_in.post(f"{PAGE}/new", {"app": "acorn-crm", "label": "Sales", "credential": GOOD_KEY})
    assert response.status_code == 400 and "inside this service&#x27;s network" in response.content.decode()
    assert not Connection.objects.exists()


def test_an_unknown_app_is_not_found_and_the_apps_are_offered(signed_in, acorn_app):
    response = signed_in.get(f"{PAGE}/new?app=no-such-app")
    assert response.status_code == 404 and "No app by that name" in response.content.decode()
    assert "?app=acorn-crm" in response.content.decode()
    assert signed_in.post(f"{PAGE}/new", {"app": "%00", "label": "x"}).status_code == 404
    assert not Connection.objects.exists()


def test_an_oauth_app_not_set_up_in_the_catalog_says_so_and_makes_nothing(signed_in, plain_apps):
    page = signed_in.get(f"{PAGE}/new?app=oauth-app").content.decode()
    assert "its catalog entry does not set up yet" in page and 'type="submit">Connect<' not in page
    response = signed_in.post(f"{PAGE}/new", {"app": "oauth-app", "label": "O"})
    assert response.status_code == 400
    assert not Connection.objects.exists()


def test_an_owner_connects_an_api_key_app_and_sees_it_listed(signed_in, acorn_app, make_automation):
    form = signed_in.get(f"{PAGE}/new?app=acorn-crm").content.decode()
    assert 'value="Acorn CRM"' in form and 'type="password"' in form and ">API key</label>" in form
    response = signed_in.post(f"{PAGE}/new", {"app": "acorn-crm", "label": "Sales", "credential": GOOD_KEY})
    connection = Connection.objects.get()
    assert response.status_code == 302 and response["Location"] == f"{PAGE}/{connection.pk}"
    make_automation(uses(connection.pk), name="Sync leads")

    html = signed_in.get(PAGE).content.decode()
    assert "Sales" in html and "Acorn CRM" in html and "…good" in html and "Sync leads" in html
    assert GOOD_KEY not in html and connection.credential_sealed not in html
    page = signed_in.get(f"{PAGE}/{connection.pk}").content.decode()
    assert "Sync leads" in page and "…good" in page and GOOD_KEY not in page


def test_the_stand_in_is_labelled_as_one(signed_in, plain_apps):
    html = signed_in.get(f"{PAGE}/new?app=mint-app").content.decode()
    assert "Stand-in: Mint App" in html and ">Token</label>" in html


def test_an_app_of_auth_type_none_connects_with_a_name_alone(signed_in, plain_apps):
    html = signed_in.get(f"{PAGE}/new?app=open-data").content.decode()
    assert 'name="credential"' not in html
    assert signed_in.post(f"{PAGE}/new", {"app": "open-data", "label": "Public"}).status_code == 302
    assert Connection.objects.get().credential_sealed == ""


def test_renaming_checks_the_name(signed_in, mine):
    response = signed_in.post(f"{PAGE}/{mine.pk}/name", {"rename-label": "  "})
    assert response.status_code == 400 and 'aria-invalid="true"' in response.content.decode()
    assert signed_in.post(f"{PAGE}/{mine.pk}/name", {"rename-label": "Support"}).status_code == 302
    assert Connection.objects.get(pk=mine.pk).label == "Support"


def test_reconnecting_with_a_refused_key_keeps_the_saved_one(signed_in, mine):
    response = signed_in.post(f"{PAGE}/{mine.pk}/key", {"reconnect-credential": "sk-revoked-7777"})
    assert response.status_code == 400 and "refused the key" in response.content.decode()
    assert "sk-revoked-7777" not in response.content.decode()
    assert keys.unseal(Connection.objects.get(pk=mine.pk).credential_sealed) == GOOD_KEY


def test_reconnecting_marks_a_broken_connection_connected(signed_in, mine):
    services.needs_reconnection(connection=mine, problem="The key was revoked.")
    assert "needs reconnection" in signed_in.get(PAGE).content.decode()
    assert signed_in.post(f"{PAGE}/{mine.pk}/key", {"reconnect-credential": GOOD_KEY}).status_code == 302
    assert Connection.objects.get(pk=mine.pk).state == Connection.State.CONNECTED


def test_delete_is_refused_while_an_automation_that_is_on_uses_it(signed_in, mine, make_automation):
    automation = make_automation(uses(mine.pk), name="Sync leads", enabled=True)
    page = signed_in.get(f"{PAGE}/{mine.pk}/delete").content.decode()
    assert "These automations are on and use it" in page and "Sync leads" in page
    response = signed_in.post(f"{PAGE}/{mine.pk}/delete", follow=True)
    assert "Not deleted: “Sync leads” use it and are on." in response.content.decode()
    assert Connection.objects.filter(pk=mine.pk).exists()
    automation.refresh_from_db()
    assert automation.enabled


def test_delete_can_turn_the_automations_off_first_and_says_so(signed_in, mine, make_automation):
    automation = make_automation(uses(mine.pk), name="Sync leads", enabled=True)
    response = signed_in.post(f"{PAGE}/{mine.pk}/delete", {"turn_off": "1"}, follow=True)
    html = response.content.decode()
    assert "“Sales” is deleted. Turned off first: “Sync leads”." in html
    assert not Connection.objects.filter(pk=mine.pk).exists()
    automation.refresh_from_db()
    assert not automation.enabled


def test_a_connection_no_automation_uses_is_deleted(signed_in, mine, make_automation):
    make_automation(uses(mine.pk + 1000), name="Other")
    assert signed_in.post(f"{PAGE}/{mine.pk}/delete").status_code == 302
    assert not Connection.objects.exists()


def test_the_key_is_never_in_the_log_an_export_or_admin(
    signed_in, acorn_app, make_automation, django_user_model, caplog
):
    caplog.set_level(logging.DEBUG)
    signed_in.post(f"{PAGE}/new", {"app": "acorn-crm", "label": "Sales", "credential": "sk-wrong-logged-3333"})
    signed_in.post(f"{PAGE}/new", {"app": "acorn-crm", "label": "Sales", "credential": GOOD_KEY})
    connection = Connection.objects.get()
    automation = make_automation(uses(connection.pk), name="Sync leads")
    assert "sk-wrong-logged-3333" not in caplog.text and GOOD_KEY not in caplog.text

    document = json.dumps(selectors.document_of(automation))
    exported = signed_in.get(f"/account/automations/{automation.pk}/export")
    assert exported.status_code == 200, exported
    exported = exported.content.decode()
    for text in (document, exported):
        assert GOOD_KEY not in text and connection.credential_sealed not in text
    assert f'"connection": {connection.pk}' in exported

    staff_client = Client()
    staff_client.force_login(django_user_model.objects.create_superuser("staff", "staff@example.com", "pw-staff-1"))
    admin_page = staff_client.get(f"/admin/connections/connection/{connection.pk}/change/").content.decode()
    assert "…good" in admin_page and GOOD_KEY not in admin_page and connection.credential_sealed not in admin_page
    listing = staff_client.get("/admin/connections/connection/").content.decode()
    assert "Sales" in listing and GOOD_KEY not in listing


def test_a_connection_to_an_app_retired_past_its_window_stays_listed_and_can_be_deleted(signed_in, mine):
    from datetime import timedelta

    from django.utils import timezone

    mine.app.retired_at = timezone.now() - timedelta(days=400)
    mine.app.save()
    assert signed_in.get(f"{PAGE}/new?app=acorn-crm").status_code == 404  # no longer connectable
    html = signed_in.get(PAGE).content.decode()
    assert "Sales" in html and "app retired" in html
    assert signed_in.post(f"{PAGE}/{mine.pk}/delete").status_code == 302
    assert not Connection.objects.exists()


def test_an_app_with_connections_cannot_be_deleted(mine):
    from django.db.models import ProtectedError

    with pytest.raises(ProtectedError):
        mine.app.delete()


def test_the_pages_speak_german(signed_in, mine):
    german = {"HTTP_ACCEPT_LANGUAGE": "de"}
    assert "Ihre Verbindungen" in signed_in.get(PAGE, **german).content.decode()
    response = signed_in.post(f"{PAGE}/{mine.pk}/key", {"reconnect-credential": "sk-wrong-5555"}, **german)
    assert "Acorn CRM hat den Schlüssel abgelehnt (401). Die Antwort lautete: Invalid API key." in (
        response.content.decode()
    )
    assert "„Sales“ löschen?" in signed_in.get(f"{PAGE}/{mine.pk}/delete", **german).content.decode()


def test_a_key_of_several_lines_is_refused_before_any_call(signed_in, acorn_app, acorn_api):
    response = signed_in.post(f"{PAGE}/new", {"app": "acorn-crm", "label": "Sales", "credential": "sk-a\nsk-b-0000"})
    assert response.status_code == 400 and "That is not a key" in response.content.decode()
    assert acorn_api[1] == [] and not Connection.objects.exists()


def test_the_pasted_key_is_left_out_of_error_reports(signed_in, acorn_app):
    from django.views.debug import SafeExceptionReporterFilter

    response = signed_in.post(f"{PAGE}/new", {"app": "acorn-crm", "label": "Sales", "credential": "sk-report-8888"})
    reported = SafeExceptionReporterFilter().get_post_parameters(response.wsgi_request)
    assert reported["credential"] != "sk-report-8888" and reported["label"] == "Sales"
