"""/signup/confirm/<token>: an altered, expired, used or replaced link is one answer; opening it uses nothing."""

import time

import pytest
from django.contrib.auth import get_user_model
from django.core import signing

from accounts.models import SignUp
from accounts.tests.conftest import csrf_token_of, link_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def link(open_signup, sign_up, mailoutbox):
    sign_up("ada@example.com", app="acorn-crm")
    return link_in(mailoutbox[-1])


def account():
    return get_user_model().objects.get(username="ada@example.com")


def dead(response) -> bool:
    return response.status_code == 404 and "This link does not work" in response.content.decode()


def test_an_altered_link_does_not_work(client, link):
    head, _, tail = link.rpartition(":")
    for altered in (head + ":" + tail[::-1], link[:-1], link + "x", "/signup/confirm/abc", "/signup/confirm/%00"):
        assert dead(client.get(altered)), altered
        assert dead(client.post(altered))
    assert not account().is_active


def test_an_expired_link_does_not_work_and_confirms_nothing(client, link, monkeypatch, settings):
    later = time.time() + settings.PASSWORD_RESET_TIMEOUT + 5
    monkeypatch.setattr(signing.time, "time", lambda: later)
    assert dead(client.get(link))
    assert dead(client.post(link))
    assert not account().is_active and SignUp.objects.get().confirmed_at is None


def test_a_used_link_does_not_work_again(client, link):
    assert client.post(link).status_code == 302
    assert dead(client.get(link))
    assert dead(client.post(link))


def test_opening_the_link_uses_nothing_so_a_mail_scanner_cannot(client, link):
    for _ in range(2):
        page = client.get(link)
        assert page.status_code == 200 and "ada@example.com" in page.content.decode()
    assert not account().is_active
    assert "no-cache" in page["Cache-Control"]


def test_confirming_needs_the_csrf_token(csrf_client, link):
    assert csrf_client.post(link).status_code == 403
    assert not account().is_active
    token = csrf_token_of(csrf_client, link)
    assert csrf_client.post(link, {"csrfmiddlewaretoken": token}).status_code == 302


def test_confirming_turns_the_account_on_and_leads_to_sign_in_with_the_app(client, acorn, link):
    response = client.post(link)
    assert response.status_code == 302
    assert response["Location"] == "/login?next=%2F%3Fapp%3Dacorn-crm"
    assert account().is_active and SignUp.objects.get().confirmed_at is not None
    assert "_auth_user_id" not in client.session  # confirming is not signing in
    page = client.get(response["Location"]).content.decode()
    assert "Your email address is confirmed" in page


def test_a_link_cannot_turn_on_again_an_account_an_administrator_turned_off(client, link):
    client.post(link)
    user = account()
    user.is_active = False
    user.save()
    assert dead(client.post(link))
    assert not account().is_active
