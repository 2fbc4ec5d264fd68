"""Your automations in Chromium against gunicorn: the list, turn off and on, copy a URL, runs, a step's output."""

from urllib.parse import urlsplit

import pytest
from django.test import Client

from automations import services
from automations.models import Run
from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END

pytestmark = END_TO_END


@pytest.fixture
def orders(make_automation):
    """An automation with a succeeded run (a step's output to open) and a failed one (to retry)."""
    automation = make_automation([{"id": "who", "kind": "set_values", "values": {"email": "x"}}], name="Orders")
    make_automation(name="Newsletter", enabled=False)
    for status, steps in (
        ("failed", [{"id": "who", "kind": "set_values", "status": "failed", "error": "boom"}]),
        ("succeeded", [{"id": "who", "kind": "set_values", "status": "succeeded", "output": {"email": "ada@x"}}]),
    ):
        Run.objects.create(
            automation=automation, source="webhook", status=status, trigger={"body": {"n": 1}}, steps=steps
        )
    return automation


def signed_in(page, web, owner) -> None:
    """The owner's session cookie in the browser: sign-in itself has tests of its own."""
    client = Client()
    client.force_login(owner)
    cookie = client.cookies["sessionid"]
    page.raw.context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": web.base}])


def test_an_owner_turns_an_automation_off_and_on_copies_its_url_and_reads_its_runs(web, page, owner, orders):
    signed_in(page, web, owner)
    raw = page.raw
    raw.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=web.base)
    page.open(f"{web.base}/account/", "your-automations")
    assert raw.get_by_role("link", name="Orders").is_visible()
    assert raw.get_by_role("link", name="Newsletter").is_visible()

    raw.get_by_role("button", name="Turn Orders off").click()
    page.check("orders-off")
    assert raw.get_by_role("status").inner_text().startswith("Off.")
    orders.refresh_from_db()
    assert not orders.enabled
    raw.get_by_role("button", name="Turn Orders on").click()
    page.check("orders-on-again")
    orders.refresh_from_db()
    assert orders.enabled

    raw.get_by_role("link", name="Orders").click()
    page.check("orders-page")
    raw.get_by_role("button", name="Copy").first.click()
    raw.get_by_role("button", name="Copied").first.wait_for()
    copied = raw.evaluate("navigator.clipboard.readText()")
    assert copied.endswith(urlsplit(services.hook_url(orders)).path) and copied.startswith("http")

    raw.get_by_role("link", name="Runs").click()
    page.check("orders-runs")
    assert raw.locator("tbody tr").count() == 2
    raw.locator("tbody tr").first.get_by_role("link").click()  # the newest: succeeded
    page.check("a-run")
    raw.get_by_text("Output").click()
    page.check("a-steps-output")
    assert '"email": "ada@x"' in raw.locator(".steps pre").inner_text()

    raw.go_back()
    raw.locator("tbody tr").nth(1).get_by_role("link").click()  # the failed one
    page.check("a-failed-run")
    raw.get_by_role("button", name="Retry").click()
    page.check("retried")
    assert Run.objects.filter(retry_of__automation=orders).count() == 1


def test_an_owners_pages_fit_a_phone(web, phone_page, owner, orders):
    signed_in(phone_page, web, owner)
    for path, label in (
        ("/account/", "list"),
        (f"/account/automations/{orders.pk}", "automation"),
        (f"/account/automations/{orders.pk}/runs", "runs"),
        (f"/account/automations/{orders.pk}/definition", "definition"),
        (f"/account/automations/{orders.pk}/verification", "verification"),
        ("/account/import", "import"),
    ):
        phone_page.open(f"{web.base}{path}", label)
        assert_fits_the_screen(phone_page)
