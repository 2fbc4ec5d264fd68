"""/login with an email address: an unconfirmed account is told to confirm, and only with its right password."""

import pytest
from django.contrib.auth import get_user_model

from accounts.tests.conftest import PASSWORD, link_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def unconfirmed(open_signup, sign_up):
    sign_up("ada@example.com")
    return get_user_model().objects.get(username="ada@example.com")


def sign_in(client, username, password, ip="198.51.100.1"):
    return client.post("/login", {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_an_unconfirmed_account_cannot_sign_in_and_is_told_to_confirm(client, unconfirmed):
    response = sign_in(client, "ada@example.com", PASSWORD)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Confirm your email address first" in html and 'href="/signup/resend"' in html
    assert "_auth_user_id" not in client.session


def test_a_wrong_password_for_an_unconfirmed_account_reads_as_any_wrong_password(client, unconfirmed):
    html = sign_in(client, "ada@example.com", "wrong").content.decode()
    assert "Please enter a correct email and password" in html and "Confirm your email" not in html
    assert "Confirm your email" not in sign_in(client, "nobody@example.com", "wrong").content.decode()


def test_an_account_an_administrator_turned_off_is_not_told_to_confirm(client, owner):
    owner.is_active = False
    owner.save()
    html = sign_in(client, "owner", "pw-owner-123").content.decode()
    assert "Confirm your email" not in html and "_auth_user_id" not in client.session


def test_the_address_signs_in_in_any_case_once_confirmed(client, unconfirmed, mailoutbox):
    client.post(link_in(mailoutbox[0]))
    response = sign_in(client, " ADA@example.COM", PASSWORD)
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.session["_auth_user_id"] == str(unconfirmed.pk)


def test_an_unconfirmed_account_gets_no_session_from_admins_sign_in_either(client, unconfirmed):
    response = client.post("/admin/login/", {"username": "ada@example.com", "password": PASSWORD})
    assert response.status_code == 200 and "_auth_user_id" not in client.session


def test_staff_still_sign_in_with_their_user_name(client, owner):
    assert sign_in(client, "owner", "pw-owner-123").status_code == 302


def test_the_link_sent_again_reaches_an_unconfirmed_account_only(client, unconfirmed, owner, mailoutbox, settings):
    answers = [
        client.post("/signup/resend", {"email": email}, REMOTE_ADDR="198.51.100.2")
        for email in ("Ada@Example.com", "owner@example.com", "nobody@example.com")
    ]
    assert {(answer.status_code, answer["Location"]) for answer in answers} == {(302, "/signup/sent")}
    assert [message.to for message in mailoutbox] == [["ada@example.com"], ["ada@example.com"]]
    assert client.get(link_in(mailoutbox[-1])).status_code == 200


def test_the_link_sent_again_is_limited_like_sign_up(client, unconfirmed, settings, mailoutbox):
    settings.ACCOUNT_MAIL_RATE_ADDRESS = "2/h"
    for _ in range(2):
        assert client.post("/signup/resend", {"email": "ada@example.com"}).status_code == 302
    refused = client.post("/signup/resend", {"email": "ada@example.com"}, REMOTE_ADDR="203.0.113.1")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert len(mailoutbox) == 1 + 2
