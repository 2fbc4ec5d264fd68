"""Sign-in and the automation diagram in Chromium against gunicorn: signed out, wrong password, signed in, phone."""

import pytest

from automations.models import Run
from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END

pytestmark = END_TO_END

STEPS = [
    {"id": "who", "kind": "set_values", "values": {"email": "{{trigger.body.email}}"}},
    {
        "id": "only_paid",
        "kind": "condition",
        "all": [{"left": "{{trigger.body.status}}", "op": "equals", "right": "paid"}],
    },
    {"id": "pause", "kind": "delay", "seconds": 3600},
    {"id": "crm", "kind": "http_request", "method": "POST", "url": "https://crm.example/contacts"},
]


@pytest.fixture
def diagram_of(make_automation):
    automation = make_automation(STEPS, name="Paid signups")
    Run.objects.create(
        automation=automation,
        source="webhook",
        status="waiting",
        definition=automation.definition,
        steps=[
            {"id": "who", "kind": "set_values", "status": "succeeded", "output": {}},
            {"id": "only_paid", "kind": "condition", "status": "succeeded", "output": {"passed": True}},
            {
                "id": "pause",
                "kind": "delay",
                "status": "waiting",
                "waiting_for": {"kind": "delay", "until": "2026-11-24"},
            },
        ],
    )
    return automation


def test_the_diagram_signed_out_then_signed_in(web, page, owner, diagram_of):
    diagram_url = f"{web.base}/automation?uuid={diagram_of.uuid}"
    page.open(diagram_url, "signed-out-goes-to-sign-in")
    assert page.raw.url == f"{web.base}/login?next=/automation%3Fuuid%3D{diagram_of.uuid}"

    assert page.raw.evaluate("document.activeElement.id") == "id_username"  # Django's sign-in form autofocuses it

    page.raw.get_by_label("Email").fill("owner")
    page.raw.get_by_label("Password").fill("wrong password")
    page.raw.get_by_role("button", name="Sign in").click()
    page.check("wrong-password")
    assert page.raw.get_by_role("alert").is_visible()

    page.raw.get_by_label("Password").fill("pw-owner-123")
    page.raw.get_by_role("button", name="Sign in").click()
    page.check("diagram")
    assert page.raw.url == diagram_url
    assert page.raw.get_by_role("heading", name="Paid signups").is_visible()
    assert page.raw.locator(".flow__node").count() == 1 + len(STEPS)
    assert page.raw.locator(".state--waiting").inner_text() == "waiting"

    page.raw.keyboard.press("Tab")  # the keyboard reaches "Skip to content" first, and it leads to the content
    assert page.raw.evaluate("document.activeElement.className") == "skip-link"
    page.check("skip-link-focused")
    page.raw.keyboard.press("Enter")
    assert page.raw.evaluate("document.activeElement.id") == "content"

    page.raw.get_by_role("button", name="Sign out").click()
    page.check("signed-out")
    assert page.raw.url == f"{web.base}/login"
    page.open(diagram_url, "signed-out-again")
    assert "/login?next=" in page.raw.url


def test_another_account_sees_not_found(web, page, another_account, diagram_of):
    page.open(f"{web.base}/login")
    page.raw.get_by_label("Email").fill("another")
    page.raw.get_by_label("Password").fill("pw-another-123")
    page.raw.get_by_role("button", name="Sign in").click()
    response = page.open(f"{web.base}/automation?uuid={diagram_of.uuid}", "another-account")
    assert response.status == 404
    assert "Paid signups" not in page.raw.content()


def test_sign_in_and_the_diagram_fit_a_phone_and_speak_german(web, phone_page, owner, diagram_of):
    phone_page.raw.context.set_extra_http_headers({"Accept-Language": "de-DE,de;q=0.9"})
    phone_page.open(f"{web.base}/login?next=/automation%3Fuuid%3D{diagram_of.uuid}", "login-phone-german")
    assert_fits_the_screen(phone_page)
    assert phone_page.raw.get_by_role("heading", name="Anmelden").is_visible()
    phone_page.raw.locator("#id_username").fill("owner")
    phone_page.raw.locator("#id_password").fill("pw-owner-123")
    phone_page.raw.get_by_role("button", name="Anmelden").click()
    phone_page.check("diagram-phone-german")
    assert_fits_the_screen(phone_page)
    assert phone_page.raw.get_by_role("heading", name="Auslöser und Schritte").is_visible()
