"""CSRF secrets and masks come from one random read each (overrides/django_csrf.py) and pass Django's own check."""

import re
from collections import Counter

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.middleware import csrf
from django.test import Client

from overrides import django_csrf

pytestmark = pytest.mark.django_db


def test_django_draws_its_csrf_strings_with_one_random_read():
    assert csrf._get_new_csrf_string is django_csrf.new_csrf_string


def test_each_character_comes_from_exactly_four_byte_values_and_bytes_from_248_on_are_dropped(monkeypatch):
    """Uniform by construction: every character is drawn by 4 of the 256 byte values, and the other 8 give none."""
    sources = Counter()
    for value in range(256):
        reads = iter([bytes([value] * 48), bytes(48)])  # a dropped value leaves nothing: the second read answers
        monkeypatch.setattr(django_csrf.os, "urandom", lambda n, reads=reads: next(reads))
        drawn = django_csrf.new_csrf_string()
        if value < 248:
            assert drawn == drawn[0] * 32
            sources[drawn[0]] += 1
        else:
            assert drawn == "a" * 32  # from the second read's zero bytes
    assert set(sources) == set(csrf.CSRF_ALLOWED_CHARS) and set(sources.values()) == {4}


def test_a_read_with_too_few_usable_bytes_reads_again(monkeypatch):
    reads = iter([bytes([255] * 30 + [0] * 18), bytes(range(48))])
    monkeypatch.setattr(django_csrf.os, "urandom", lambda n: next(reads))
    assert django_csrf.new_csrf_string() == "a" * 18 + csrf.CSRF_ALLOWED_CHARS[:14]


def test_strings_are_32_characters_of_the_alphabet_and_never_repeat():
    drawn = [django_csrf.new_csrf_string() for _ in range(2000)]
    assert len(set(drawn)) == len(drawn)
    assert all(re.fullmatch(r"[a-zA-Z0-9]{32}", string) for string in drawn)


def test_a_django_without_the_hook_is_refused_at_start(monkeypatch):
    monkeypatch.delattr(csrf, "_get_new_csrf_string")
    with pytest.raises(ImproperlyConfigured, match="django_csrf.py"):
        django_csrf.install()


def test_a_token_from_a_page_passes_the_check_and_a_made_up_one_does_not():
    browser = Client(enforce_csrf_checks=True)
    page = browser.get("/login").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    assert len(token) == 64 and browser.cookies["csrftoken"].value != token
    refused = browser.post("/login", {"csrfmiddlewaretoken": "a" * 64, "username": "x", "password": "y"})
    assert refused.status_code == 403
    passed = browser.post("/login", {"csrfmiddlewaretoken": token, "username": "x", "password": "y"})
    assert passed.status_code != 403
