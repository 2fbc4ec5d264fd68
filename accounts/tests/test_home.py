"""/: sign in signed out, your automations and sign out signed in, every kind of public URL, the app a sign-up named."""

import pytest

pytestmark = pytest.mark.django_db


def test_signed_out_the_home_offers_sign_in_and_sign_up_when_open(client, settings):
    html = client.get("/").content.decode()
    assert '<a href="/login">Sign in</a>' in html and 'href="/signup"' not in html
    assert "/account/" not in html and "Sign out" not in html
    settings.SIGNUP_OPEN = True
    assert 'href="/signup"' in client.get("/").content.decode()


def test_signed_in_the_home_links_your_automations_and_signs_out(client, owner):
    client.force_login(owner)
    html = client.get("/").content.decode()
    assert '<a href="/account/">Your automations</a>' in html
    assert '<form class="sign-out" method="post" action="/logout">' in html
    assert '<a href="/login">' not in html


def test_the_home_names_every_kind_of_public_url(client):
    html = client.get("/").content.decode()
    for kind in ("Catalog feed", "Webhooks", "Web services", "Forms", "Chat", "Approvals", "MCP"):
        assert f"<dt>{kind}</dt>" in html, kind
    for path in ("/catalog/v1/apps", "/automation-{key}", "/webservice-{key}", "/form/{key}", "/webchat/{key}"):
        assert f"<code>{path}</code>" in html, path


def test_the_app_a_sign_up_named_is_offered_to_a_signed_in_account(client, owner, acorn):
    assert "Connect Acorn CRM" not in client.get("/?app=acorn-crm").content.decode()
    client.force_login(owner)
    html = client.get("/?app=acorn-crm").content.decode()
    assert "Connect Acorn CRM" in html and 'href="/account/connections/new?app=acorn-crm"' in html
    for other in ("nothing-here", "ACORN-CRM", "%00"):
        assert "Connect" not in client.get(f"/?app={other}").content.decode()


@pytest.mark.parametrize(
    "path", ["/", "/signup/sent", "/signup/resend", "/signup/confirm/x", "/password-reset", "/password-reset/done"]
)
def test_every_page_a_signed_in_account_sees_offers_sign_out(client, owner, path):
    client.force_login(owner)
    assert '<form class="sign-out" method="post" action="/logout">' in client.get(path).content.decode()
