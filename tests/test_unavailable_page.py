"""One design for every key that leads nowhere, each kind in its own words (interfaces/pages.py)."""

import re

import pytest
from django.test import RequestFactory

from interfaces.pages import unavailable

pytestmark = pytest.mark.django_db
NEVER_ISSUED = "A" * 32


def heading(response) -> str:
    return re.search(r'<h1 id="gone-heading">([^<]+)</h1>', response.content.decode()).group(1)


def test_the_one_time_form_page_says_the_form_is_not_available_and_is_never_cached():
    response = unavailable(RequestFactory().get("/form/s/anything"))
    assert response.status_code == 404
    assert b"This form is not available" in response.content
    assert b"may already have been submitted" in response.content
    assert "no-store" in response["Cache-Control"]


@pytest.mark.parametrize(
    ("path", "words", "not_words"),
    [
        (f"/form/{NEVER_ISSUED}", "This form is not available", "submitted"),
        (f"/form/s/{NEVER_ISSUED}", "This form is not available", "approval"),
        (f"/form/run/{NEVER_ISSUED}", "This page is not available", "approval"),
        (f"/moderation?queue={NEVER_ISSUED}", "This approval link is not available", "form"),
        ("/no/such/page", "Page not found", "form"),
    ],
    ids=["hosted form", "one-time form", "form session", "approval link", "any other page"],
)
def test_each_kind_of_key_that_leads_nowhere_gets_the_one_design_in_its_own_words(client, path, words, not_words):
    response = client.get(path)
    assert response.status_code == 404
    assert heading(response) == words
    assert not_words not in response.content.decode().split("<main", 1)[1].lower()
    assert '<section class="gone"' in response.content.decode() and "flowgate.css" in response.content.decode()


def test_a_wrong_approval_link_reads_the_same_whatever_it_was():
    one = RequestFactory().get("/moderation?queue=x")
    assert unavailable(one, "approval").content == unavailable(RequestFactory().get("/moderation"), "approval").content


def test_a_server_error_gets_the_same_design_without_a_request(client, settings):
    from django.views.defaults import server_error

    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    assert b"Something went wrong" in response.content and b'<section class="gone"' in response.content
