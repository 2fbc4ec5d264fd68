"""/signup: a taken address tells nothing, closed says how to get an account, limited per client and address."""

import pytest
from django.contrib.auth import get_user_model

from accounts.models import SignUp
from accounts.tests.conftest import PASSWORD, csrf_token_of, link_in

pytestmark = pytest.mark.django_db


def test_a_taken_address_gets_the_same_answer_and_its_owner_a_notice(open_signup, sign_up, owner, mailoutbox):
    taken = sign_up("Owner@Example.com", ip="198.51.100.1")
    new = sign_up("someone-new@example.com", ip="198.51.100.2")
    assert (taken.status_code, taken["Location"]) == (new.status_code, new["Location"]) == (302, "/signup/sent")
    assert get_user_model().objects.filter(email__iexact="owner@example.com").count() == 1
    owner.refresh_from_db()
    assert owner.check_password("pw-owner-123")  # the attempt changed nothing
    notice, confirmation = mailoutbox
    assert notice.to == ["owner@example.com"] and "already has an account" in notice.body
    assert "/signup/confirm/" not in notice.body and "/password-reset" in notice.body
    assert confirmation.to == ["someone-new@example.com"] and "/signup/confirm/" in confirmation.body


def test_an_address_held_as_a_staff_accounts_email_is_taken(open_signup, sign_up, django_user_model, mailoutbox):
    django_user_model.objects.create_user("ada", "Ada@Example.com", "pw-ada-123")
    assert sign_up("ada@example.com").status_code == 302
    assert not SignUp.objects.exists()
    assert [message.to for message in mailoutbox] == [["Ada@example.com"]]


def test_a_closed_sign_up_says_how_to_get_an_account_and_makes_none(client, sign_up, acorn, mailoutbox):
    page = client.get("/signup?app=acorn-crm")
    html = page.content.decode()
    assert page.status_code == 200
    assert "an administrator of this Flowgate makes accounts" in html and 'name="password"' not in html
    assert 'href="/login?next=%2F%3Fapp%3Dacorn-crm"' in html and "/admin/login" not in html
    refused = sign_up("ada@example.com")
    assert refused.status_code == 403
    assert not get_user_model().objects.exists() and mailoutbox == []


def test_the_nth_sign_up_from_one_client_is_refused_with_retry_after(open_signup, sign_up, settings, mailoutbox):
    settings.ACCOUNT_MAIL_RATE_IP = "3/h"
    for n in range(3):
        assert sign_up(f"person-{n}@example.com", ip="203.0.113.7").status_code == 302
    refused = sign_up("person-9@example.com", ip="203.0.113.7")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert "Too many requests" in refused.content.decode()
    assert not get_user_model().objects.filter(username="person-9@example.com").exists()
    assert len(mailoutbox) == 3
    assert sign_up("person-9@example.com", ip="203.0.113.8").status_code == 302


def test_the_nth_mail_to_one_address_is_refused_from_any_client(open_signup, sign_up, settings, mailoutbox):
    settings.ACCOUNT_MAIL_RATE_ADDRESS = "2/h"
    for n, email in enumerate(["ada@example.com", " ADA@example.com"]):
        assert sign_up(email, ip=f"198.51.100.{n + 1}").status_code == 302
    assert sign_up("Ada@Example.com", ip="198.51.100.9").status_code == 429
    assert len(mailoutbox) == 2


def test_a_sign_up_without_the_csrf_token_is_refused(open_signup, csrf_client, mailoutbox):
    data = {"email": "ada@example.com", "password": PASSWORD}
    assert csrf_client.post("/signup", data).status_code == 403
    assert not get_user_model().objects.exists()
    data["csrfmiddlewaretoken"] = csrf_token_of(csrf_client, "/signup")
    assert csrf_client.post("/signup", data).status_code == 302


@pytest.mark.parametrize(
    ("password", "error"),
    [
        ("short", "This password is too short"),
        ("password123", "This password is too common"),
        ("83920571946", "This password is entirely numeric"),
        ("ada-lovelace-example", "too similar to the"),
    ],
)
def test_a_password_djangos_validators_refuse_is_said_beside_it(open_signup, sign_up, password, error, mailoutbox):
    response = sign_up("ada-lovelace@example.com", password=password)
    html = response.content.decode()
    assert response.status_code == 200
    assert error in html and 'id="id_password_error"' in html
    assert 'value="ada-lovelace@example.com"' in html
    assert not get_user_model().objects.exists() and mailoutbox == []


def test_a_malformed_address_is_said_beside_it(open_signup, sign_up):
    response = sign_up("not an address")
    assert response.status_code == 200
    assert 'id="id_email_error"' in response.content.decode()


def test_a_sign_up_makes_an_inactive_account_and_mails_its_link(open_signup, sign_up, mailoutbox):
    response = sign_up("  Ada@Example.COM ")
    assert response.status_code == 302 and response["Location"] == "/signup/sent"
    user = get_user_model().objects.get()
    assert (user.username, user.email, user.is_active) == ("ada@example.com", "ada@example.com", False)
    assert user.check_password(PASSWORD) and user.signup.confirmed_at is None
    (message,) = mailoutbox
    assert message.to == ["ada@example.com"]
    assert link_in(message).startswith("/signup/confirm/")


def test_signing_up_again_before_confirming_starts_over(open_signup, client, sign_up, mailoutbox):
    sign_up("ada@example.com", password="first-fine-password-1")
    sign_up("ada@example.com", password="second-fine-password-2")
    user = get_user_model().objects.get()
    assert user.check_password("second-fine-password-2") and not user.is_active
    first, second = (link_in(message) for message in mailoutbox)
    assert client.get(first).status_code == 404  # the first password's link is retired
    assert client.get(second).status_code == 200


def test_a_signed_in_visitor_of_signup_goes_home_offering_the_app(client, owner, acorn):
    client.force_login(owner)
    response = client.get("/signup?app=acorn-crm")
    assert response.status_code == 302 and response["Location"] == "/?app=acorn-crm"


def test_the_sent_page_offers_the_link_again(client):
    html = client.get("/signup/sent").content.decode()
    assert "Check your inbox" in html and 'href="/signup/resend"' in html
