"""/account/connections in Chromium against gunicorn, at a desktop's and a phone's width: an owner connects an
api_key app whose test call reaches a local server standing in for it, a refused key first, and sees it listed."""

import pytest
from django.test import Client

from catalog.models import App
from conftest import app_doc
from connections.models import Connection
from connections.tests.fixtures import GOOD_KEY
from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END, Stack

pytestmark = END_TO_END


@pytest.fixture
def web(tmp_path, browser):
    stack = Stack(tmp_path, HTTP_STEP_ALLOW_PRIVATE="1")  # Acorn's API below listens on 127.0.0.1
    stack.start_web()
    yield stack
    stack.stop()


@pytest.fixture
def acorn_catalog(make_catalog, acorn_api):
    base, _ = acorn_api
    test_request = {"url": f"{base}/v1/me", "headers": {"Authorization": "Bearer {{api_key}}"}}
    make_catalog(
        app_doc("acorn-crm", name="Acorn CRM", auth_type="api_key", auth_config={"test_request": test_request})
    )
    return App.objects.get(slug="acorn-crm")


def signed_in(page, web, owner) -> None:
    client = Client()
    client.force_login(owner)
    page.raw.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": web.base}])


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_an_owner_connects_an_api_key_app_and_sees_it_listed(web, page, phone_page, owner, acorn_catalog, width):
    page = phone_page if width == "phone" else page
    raw = page.raw
    signed_in(page, web, owner)
    page.open(f"{web.base}/?app=acorn-crm", "offered")
    raw.get_by_role("link", name="Connect Acorn CRM").click()
    page.check("connect-form")
    assert raw.get_by_label("Name").input_value() == "Acorn CRM"

    raw.get_by_label("API key").fill("sk-wrong-0000")
    raw.get_by_role("button", name="Connect").click()
    page.check("refused-key")
    assert raw.locator(".field__error").inner_text() == (
        "Acorn CRM refused the key (401). It said: Invalid API key. Make a new one under Settings > API."
    )
    assert raw.get_by_label("API key").input_value() == ""  # never filled back in
    assert not Connection.objects.exists()

    raw.get_by_label("Name").fill("Sales team")
    raw.get_by_label("API key").fill(GOOD_KEY)
    raw.get_by_role("button", name="Connect").click()
    page.check("connected")
    assert "Acorn CRM is connected as “Sales team”." in raw.get_by_role("status").inner_text()

    raw.get_by_role("link", name="Your connections").click()
    page.check("your-connections")
    if width == "phone":
        assert_fits_the_screen(page)
    row = raw.locator("tbody tr")
    assert row.count() == 1
    assert row.get_by_role("link", name="Sales team").is_visible()
    assert "…good" in row.inner_text() and "connected" in row.inner_text()
    assert GOOD_KEY not in raw.content()


def test_an_owner_chooses_an_app_and_deletes_a_connection_an_automation_uses(
    web, phone_page, owner, acorn_catalog, make_automation, settings
):
    from connections import services

    settings.HTTP_STEP_ALLOW_PRIVATE = True  # the connection made here, in the test's process
    page, raw = phone_page, phone_page.raw
    connection = services.connect(owner=owner, app=acorn_catalog, label="Sales team", credential=GOOD_KEY)
    automation = make_automation([{"id": "use", "kind": "set_values", "values": {"connection": connection.pk}}])
    automation.name = "Sync leads"
    automation.save()
    signed_in(page, web, owner)

    page.open(f"{web.base}/account/connections/new", "choose-an-app")
    raw.get_by_label("Find an app").fill("acorn")
    raw.get_by_role("button", name="Search").click()
    page.check("found")
    assert raw.get_by_role("link", name="Acorn CRM").get_attribute("href") == "/account/connections/new?app=acorn-crm"

    page.open(f"{web.base}/account/connections/{connection.pk}", "a-connection")
    assert_fits_the_screen(page)
    raw.get_by_role("link", name="Delete this connection…").click()
    page.check("delete-blocked")
    assert_fits_the_screen(page)
    assert raw.get_by_role("alert").get_by_role("link", name="Sync leads").is_visible()
    raw.get_by_role("button", name="Turn off 1 automation and delete").click()
    page.check("deleted")
    assert "Turned off first: “Sync leads”." in raw.get_by_role("status").inner_text()
    assert not Connection.objects.exists()
    automation.refresh_from_db()
    assert not automation.enabled
