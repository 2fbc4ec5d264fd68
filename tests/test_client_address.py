"""The client address read from X-Forwarded-For: an entry with a port counts as its address."""

import pytest
from django.test import RequestFactory

from edge import clients


def address(settings, forwarded: str, proxies: int = 1, remote: str = "10.0.0.1") -> str:
    settings.TRUSTED_PROXY_COUNT = proxies
    return clients.client_address(RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded))


@pytest.mark.parametrize(
    ("forwarded", "expected"),
    [
        ("203.0.113.5:4711", "203.0.113.5"),
        ("[2001:db8::1]:443", "2001:db8::1"),
        ("[2001:db8::1]", "2001:db8::1"),
        ("6.6.6.6, 203.0.113.5:4711", "203.0.113.5"),
        (" 203.0.113.5:1 ", "203.0.113.5"),
    ],
)
def test_it_counts_an_entry_with_a_port_as_its_address(settings, forwarded, expected):
    assert address(settings, forwarded) == expected


@pytest.mark.parametrize("forwarded", ["2001:db8::1", "::1", "::ffff:203.0.113.5"])
def test_it_reads_a_bare_ipv6_entry_whole(settings, forwarded):
    assert address(settings, forwarded) == forwarded


@pytest.mark.parametrize(
    "forwarded", ["203.0.113.5:", "203.0.113.5:http", "[2001:db8::1]:", "[2001:db8::1]x", "[2001:db8::1", "host:80"]
)
def test_a_malformed_entry_falls_back_to_the_peer(settings, forwarded):
    assert address(settings, forwarded) == "10.0.0.1"


def test_each_port_of_one_client_shares_its_counter(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    keys = {
        clients.client_key(RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=entry))
        for entry in ("203.0.113.5", "203.0.113.5:4711", "203.0.113.5:4712")
    }
    assert keys == {"203.0.113.5"}
    keys = {
        clients.client_key(RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=entry))
        for entry in ("2001:db8::1", "[2001:db8::1]:443", "[2001:db8::2]:444")
    }
    assert keys == {"2001:db8::/64"}


def test_the_header_is_ignored_without_trusted_proxies(settings):
    assert address(settings, "203.0.113.5:4711", proxies=0) == "10.0.0.1"
