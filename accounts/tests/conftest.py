"""Personas and helpers of accounts' tests: an open sign-up, a visitor signing up, the links in their mail."""

import re

import pytest
from django.test import Client

from conftest import app_doc

PASSWORD = "a-long-and-fine-password-42"


@pytest.fixture
def open_signup(settings):
    settings.SIGNUP_OPEN = True


@pytest.fixture
def acorn(make_catalog):
    make_catalog(app_doc("acorn-crm", name="Acorn CRM"))
    return "acorn-crm"


@pytest.fixture
def sign_up(client, django_capture_on_commit_callbacks):
    """POST /signup as a visitor would, mails sent as on commit; returns the response."""

    def post(email, password=PASSWORD, ip="198.51.100.1", app="", via=None):
        with django_capture_on_commit_callbacks(execute=True):
            return (via or client).post("/signup", {"email": email, "password": password, "app": app}, REMOTE_ADDR=ip)

    return post


@pytest.fixture
def csrf_client():
    return Client(enforce_csrf_checks=True)


def link_in(message) -> str:
    """The one link of a mail, as a path of BASE_URL."""
    links = re.findall(r"http://testserver(/\S+)", message.body)
    assert links, message.body
    return links[0]


def csrf_token_of(client, path: str) -> str:
    client.get(path)
    return client.cookies["csrftoken"].value
