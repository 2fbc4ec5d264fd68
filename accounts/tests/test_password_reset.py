"""Password reset by email: Django's views in the pages' look, links on BASE_URL, limited like sign-up."""

import re

import pytest

from accounts.tests.conftest import csrf_token_of

pytestmark = pytest.mark.django_db


def reset_link(message) -> str:
    (path,) = re.findall(r"http://testserver(/password-reset/\S+)", message.body)
    return path


def test_an_unknown_address_gets_the_same_answer_and_no_mail(client, owner, mailoutbox):
    unknown = client.post("/password-reset", {"email": "nobody@example.com"})
    known = client.post("/password-reset", {"email": "OWNER@example.com"})
    assert (unknown.status_code, unknown["Location"]) == (known.status_code, known["Location"])
    assert known["Location"] == "/password-reset/sent"
    assert [message.to for message in mailoutbox] == [["owner@example.com"]]


def test_the_reset_asks_for_the_csrf_token(csrf_client, owner, mailoutbox):
    assert csrf_client.post("/password-reset", {"email": "owner@example.com"}).status_code == 403
    token = csrf_token_of(csrf_client, "/password-reset")
    data = {"email": "owner@example.com", "csrfmiddlewaretoken": token}
    assert csrf_client.post("/password-reset", data).status_code == 302
    assert len(mailoutbox) == 1


def test_the_nth_reset_for_one_address_is_refused(client, owner, settings, mailoutbox):
    settings.ACCOUNT_MAIL_RATE_ADDRESS = "2/h"
    for n in range(2):
        client.post("/password-reset", {"email": "owner@example.com"}, REMOTE_ADDR=f"198.51.100.{n + 1}")
    refused = client.post("/password-reset", {"email": "owner@example.com"}, REMOTE_ADDR="198.51.100.9")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert len(mailoutbox) == 2


def test_a_used_reset_link_does_not_work_again(client, owner, mailoutbox):
    client.post("/password-reset", {"email": "owner@example.com"}, HTTP_HOST="testserver")
    link = reset_link(mailoutbox[0])
    form = client.get(link, follow=True)
    new = {"new_password1": "a-brand-new-password-7", "new_password2": "a-brand-new-password-7"}
    assert client.post(form.redirect_chain[-1][0], new).status_code == 302
    owner.refresh_from_db()
    assert owner.check_password("a-brand-new-password-7")
    again = client.get(link, follow=True)
    assert "This link does not work" in again.content.decode()


def test_the_new_password_form_says_the_rules_beside_the_field(client, owner, mailoutbox):
    client.post("/password-reset", {"email": "owner@example.com"})
    html = client.get(reset_link(mailoutbox[0]), follow=True).content.decode()
    assert '<label for="id_new_password1"' in html and 'id="id_new_password1_helptext"' in html
    assert "<ul>" not in html
