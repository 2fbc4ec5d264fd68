"""Admin: clients, grants and tokens visible and revocable; the app callback list; a user's connected clients."""

import pytest
from django.test import Client
from oauth2_provider.models import AccessToken, Application, RefreshToken

from mcp_auth.models import AppCallback
from mcp_auth.tests.conftest import code_for, refresh, register, start_flow

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/admin/oauth2_provider/application/",
        "/admin/oauth2_provider/grant/",
        "/admin/oauth2_provider/accesstoken/",
        "/admin/oauth2_provider/refreshtoken/",
        "/admin/mcp_auth/appcallback/",
    ],
)
def test_staff_see_clients_grants_tokens_and_app_callbacks(admin_client, tokens, path):
    response = admin_client.get(path)
    assert response.status_code == 200


def test_a_clients_page_shows_its_registration_and_no_secret(admin_client):
    agent = register(Client(), token_endpoint_auth_method="client_secret_post", client_name="Zed")
    application = Application.objects.get(client_id=agent["client_id"])
    page = admin_client.get(f"/admin/oauth2_provider/application/{application.pk}/change/").content.decode()
    assert "client_secret_post" in page and "Zed" in page
    assert agent["client_secret"] not in page


def test_staff_revoke_every_token_of_a_client(admin_client, tokens, client):
    flow, body = tokens
    application = Application.objects.get(client_id=flow.client_id)
    response = admin_client.post(
        "/admin/oauth2_provider/application/",
        {"action": "disconnect_everyone", "_selected_action": [application.pk]},
    )
    assert response.status_code == 302
    assert not AccessToken.objects.exists()
    assert refresh(client, flow, body["refresh_token"]).json()["error"] == "invalid_grant"


def test_a_users_admin_page_lists_their_connected_clients_and_staff_can_disconnect_them(admin_client, tokens, owner):
    flow, body = tokens
    page = admin_client.get(f"/admin/auth/user/{owner.pk}/change/").content.decode()
    assert "Connected AI clients (MCP)" in page
    assert "Test Agent" in page and flow.client_id in page
    tokens_link = f"/admin/oauth2_provider/refreshtoken/?user__id__exact={owner.pk}"
    assert tokens_link in page
    assert admin_client.get(tokens_link).status_code == 200

    admin_client.post("/admin/auth/user/", {"action": "disconnect_clients", "_selected_action": [owner.pk]})
    assert not AccessToken.objects.exists()
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()
    assert "Test Agent" not in admin_client.get(f"/admin/auth/user/{owner.pk}/change/").content.decode()


def test_a_user_with_no_client_shows_none(admin_client, owner):
    page = admin_client.get(f"/admin/auth/user/{owner.pk}/change/").content.decode()
    assert "Connected AI clients (MCP)" in page


@pytest.mark.parametrize(
    "uri, accepted",
    [
        ("zed://oauth/callback", True),
        ("https://example.com/cb", False),
        ("http://127.0.0.1/cb", False),
        ("javascript:alert(1)", False),
        ("data:text/html,hi", False),
        ("zed://oauth/callback#x", False),
        ("zed://oauth/call back", False),
    ],
)
def test_staff_list_only_app_scheme_callbacks(admin_client, uri, accepted):
    response = admin_client.post("/admin/mcp_auth/appcallback/add/", {"uri": uri, "app_name": "Zed"})
    assert (response.status_code == 302) is accepted
    assert AppCallback.objects.filter(uri=uri).exists() is accepted


def test_the_approver_can_connect_after_staff_grant_the_permission(client, owner, agent, admin_client):
    client.force_login(owner)
    flow = start_flow(agent)
    assert client.get(flow.url).status_code == 403
    from django.contrib.auth.models import Permission

    permission = Permission.objects.get(codename="use_mcp_tools")
    admin_client.post(
        f"/admin/auth/user/{owner.pk}/change/",
        {
            "username": "owner",
            "email": "owner@example.com",
            "is_active": "on",
            "user_permissions": [permission.pk],
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert owner.__class__.objects.get(pk=owner.pk).has_perm("mcp_auth.use_mcp_tools")
    assert code_for(client, flow)


def change_form_data(admin_client, application: Application, **changes) -> dict:
    """What the client's change page posts when staff save it: its fields as the page fills them, then changes."""
    page = admin_client.get(f"/admin/oauth2_provider/application/{application.pk}/change/")
    form = page.context["adminform"].form
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is True:
            data[name] = "on"
        elif value not in (None, False):
            data[name] = value
    for formset in page.context["inline_admin_formsets"]:
        management = formset.formset.management_form
        data.update({management.add_prefix(key): value for key, value in management.initial.items()})
        for index, inline_form in enumerate(formset.formset.forms):
            data[f"{formset.formset.prefix}-{index}-id"] = inline_form.instance.pk
            data[f"{formset.formset.prefix}-{index}-application"] = application.pk
    return {**data, **changes}


CURSOR = "cursor://anysphere.cursor-mcp/oauth/callback"


@pytest.mark.parametrize(
    "redirect_uris, saved",
    [
        (CURSOR, True),  # on the allow list (mcp_auth/migrations/0003)
        (f"http://127.0.0.1:33418/callback {CURSOR}", True),
        ("https://agent.example/callback", True),
        ("zed://oauth/callback", False),  # an app scheme not on the list
        ("http://agent.example/callback", False),  # http only on this machine
        ("javascript:alert(1)", False),
    ],
)
def test_staff_save_a_client_whose_redirect_uris_pass_the_registration_rules(
    admin_client, cursor_callback, redirect_uris, saved
):
    agent = register(Client(), redirect_uris=[CURSOR], client_name="Cursor")
    application = Application.objects.get(client_id=agent["client_id"])

    response = admin_client.post(
        f"/admin/oauth2_provider/application/{application.pk}/change/",
        change_form_data(admin_client, application, name="Cursor (renamed)", redirect_uris=redirect_uris),
    )

    assert (response.status_code == 302) is saved, response.context and response.context["adminform"].form.errors
    application.refresh_from_db()
    assert (application.name == "Cursor (renamed)") is saved
    assert (application.redirect_uris == redirect_uris) is saved
