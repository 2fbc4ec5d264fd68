"""Accounts in Chromium against gunicorn: sign up, confirm from the mail, sign in, sign out, reset a password.

The web process writes each mail to a file (Django's file email backend); the
test reads the links from there, as a person would from their inbox. Every
page is checked by axe and saved as a screenshot, at a desktop's and a phone's
width.
"""

import re

import pytest

from conftest import app_doc
from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END

PASSWORD = "a-long-and-fine-password-42"


@pytest.fixture
def web(tmp_path, browser):
    stack = Stack(
        tmp_path,
        SIGNUP_OPEN="1",
        EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend",
        EMAIL_FILE_PATH=str(tmp_path / "mail"),
    )
    stack.mail = tmp_path / "mail"
    stack.start_web()
    yield stack
    stack.stop()


def links_mailed(stack, to: str, path: str) -> list[str]:
    """The links to `path...` in the mails the web process wrote to `to`, oldest first."""
    found = []
    for file in sorted(stack.mail.glob("*.log")) if stack.mail.exists() else []:
        for message in file.read_text().split("-" * 79):
            if f"To: {to}" in message:
                found += re.findall(rf"({re.escape(stack.base)}{re.escape(path)}\S+)", message)
    return found


def check(page, label: str, phone: bool) -> None:
    page.check(label)
    if phone:
        assert_fits_the_screen(page)


@pytest.mark.parametrize("size", ["page", "phone_page"])
def test_sign_up_confirm_sign_in_and_sign_out(web, make_catalog, request, size):
    page, phone = request.getfixturevalue(size), size == "phone_page"
    make_catalog(app_doc("acorn-crm", name="Acorn CRM"))
    email = f"ada-{size.replace('_', '-')}@example.com"
    raw = page.raw

    page.open(f"{web.base}/signup?app=acorn-crm", "sign-up")
    assert raw.get_by_role("heading", name="Connect Acorn CRM").is_visible()
    raw.get_by_label("Email").fill(email)
    raw.get_by_label("Password").fill("password")
    raw.get_by_role("button", name="Create account").click()
    check(page, "weak-password", phone)
    assert "too common" in raw.locator("#id_password_error").inner_text()

    raw.get_by_label("Password").fill(PASSWORD)
    raw.get_by_role("button", name="Create account").click()
    check(page, "check-your-inbox", phone)
    assert raw.get_by_role("heading", name="Check your inbox").is_visible()

    page.open(f"{web.base}/login", "sign-in-unconfirmed")
    raw.get_by_label("Email").fill(email)
    raw.get_by_label("Password").fill(PASSWORD)
    raw.get_by_role("button", name="Sign in").click()
    check(page, "told-to-confirm", phone)
    assert "Confirm your email address first" in raw.get_by_role("alert").inner_text()

    (link,) = wait_until(lambda: links_mailed(web, email, "/signup/confirm/"), 10, message="the confirmation mail")
    page.open(link, "confirm")
    raw.get_by_role("button", name="Confirm").click()
    check(page, "confirmed-sign-in", phone)
    assert "Your email address is confirmed" in raw.get_by_role("status").inner_text()

    raw.get_by_label("Email").fill(email.upper())
    raw.get_by_label("Password").fill(PASSWORD)
    raw.get_by_role("button", name="Sign in").click()
    check(page, "home-offers-the-app", phone)
    assert raw.url == f"{web.base}/?app=acorn-crm"
    assert raw.get_by_role("heading", name="Connect Acorn CRM").is_visible()
    assert raw.get_by_role("link", name="Connect Acorn CRM").get_attribute("href") == (
        "/account/connections/new?app=acorn-crm"
    )
    assert raw.get_by_role("link", name="Your automations").get_attribute("href") == "/account/"

    page.open(link, "used-link")
    assert raw.get_by_role("heading", name="This link does not work").is_visible()
    raw.get_by_role("button", name="Sign out").click()
    check(page, "signed-out", phone)
    assert raw.url == f"{web.base}/login"
    page.open(f"{web.base}/", "home-signed-out")
    assert raw.get_by_role("link", name="Sign in").is_visible()


@pytest.mark.parametrize("size", ["page", "phone_page"])
def test_reset_a_forgotten_password(web, owner, request, size):
    page, phone = request.getfixturevalue(size), size == "phone_page"
    raw = page.raw
    page.open(f"{web.base}/login", "sign-in")
    raw.get_by_role("link", name="Forgot your password?").click()
    check(page, "reset-form", phone)
    raw.get_by_label("Email").fill("owner@example.com")
    raw.get_by_role("button", name="Send the link").click()
    check(page, "reset-sent", phone)
    assert raw.get_by_role("heading", name="Check your inbox").is_visible()

    (link,) = wait_until(lambda: links_mailed(web, "owner@example.com", "/password-reset/"), 10, message="the mail")
    page.open(link, "new-password")
    raw.get_by_label("New password", exact=True).fill("a-brand-new-password-7")
    raw.get_by_label("New password confirmation").fill("a-brand-new-password-7")
    raw.get_by_role("button", name="Set the password").click()
    check(page, "password-changed", phone)
    raw.get_by_role("link", name="Sign in").click()
    raw.get_by_label("Email").fill("owner")
    raw.get_by_label("Password").fill("a-brand-new-password-7")
    raw.get_by_role("button", name="Sign in").click()
    check(page, "signed-in", phone)
    assert raw.url == f"{web.base}/"
    assert raw.get_by_role("button", name="Sign out").is_visible()


def test_a_closed_sign_up_a_dead_link_and_the_limit_at_a_phones_width(tmp_path, browser, phone_page, make_catalog):
    make_catalog(app_doc("acorn-crm", name="Acorn CRM"))
    stack = Stack(tmp_path, ACCOUNT_MAIL_RATE_ADDRESS="1/h")  # SIGNUP_OPEN unset: closed
    stack.start_web()
    page, raw = phone_page, phone_page.raw
    try:
        page.open(f"{stack.base}/signup?app=acorn-crm", "closed-sign-up")
        assert_fits_the_screen(page)
        assert raw.get_by_role("heading", name="Getting an account").is_visible()
        assert raw.get_by_role("textbox").count() == 0
        assert raw.get_by_role("link", name="Sign in").get_attribute("href") == "/login?next=%2F%3Fapp%3Dacorn-crm"

        page.open(f"{stack.base}/signup/confirm/not-a-link", "dead-link")
        assert_fits_the_screen(page)
        raw.get_by_role("link", name="send the link again").click()
        page.check("resend")
        for label in ("resend-sent", "too-many"):
            raw.get_by_label("Email").fill("ada@example.com")
            raw.get_by_role("button", name="Send the link").click()
            page.check(label)
            assert_fits_the_screen(page)
            if label == "resend-sent":
                raw.get_by_role("link", name="send the link again").click()
        assert raw.get_by_role("heading", name="Too many requests").is_visible()
    finally:
        stack.stop()
