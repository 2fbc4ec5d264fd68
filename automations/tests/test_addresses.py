"""addresses.is_reachable: an IPv6 address that wraps an internal IPv4 address is internal, whatever is_global says."""

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from automations.addresses import describe, is_reachable, wrapped_ipv4

ipv4s = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)
internal_ipv4s = ipv4s.filter(lambda ip: not ip.is_global)
global_ipv4s = ipv4s.filter(lambda ip: ip.is_global)
bits = st.integers(0, 2**128 - 1)


def mapped(v4, _):
    return ipaddress.IPv6Address(0xFFFF << 32 | int(v4))


def compatible(v4, _):
    return ipaddress.IPv6Address(int(v4))


def translated(v4, _):
    return ipaddress.IPv6Address(0xFFFF << 48 | int(v4))


def nat64(v4, _):
    return ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(v4))


def sixtofour(v4, noise):
    return ipaddress.IPv6Address(0x2002 << 112 | int(v4) << 80 | noise & (2**80 - 1))


def teredo(v4, noise):
    """2001:0:<server>:<flags>:<port>:<client>, the client's bits inverted."""
    return ipaddress.IPv6Address(0x20010000 << 96 | noise & (2**96 - 1) & ~0xFFFFFFFF | int(v4) ^ 0xFFFFFFFF)


WRAPPERS = [mapped, compatible, translated, nat64, sixtofour, teredo]


@given(st.sampled_from(WRAPPERS), internal_ipv4s, bits)
def test_an_address_wrapping_an_internal_ipv4_address_is_internal(wrap, v4, noise):
    address = wrap(v4, noise)
    assert not is_reachable(str(address))
    if address not in (ipaddress.IPv6Address("::"), ipaddress.IPv6Address("::1")):
        assert wrapped_ipv4(address) == v4


@given(st.sampled_from(WRAPPERS), global_ipv4s, bits)
def test_an_address_wrapping_a_public_ipv4_address_is_judged_as_itself(wrap, v4, noise):
    address = wrap(v4, noise)
    assert wrapped_ipv4(address) == v4
    if wrap is mapped:  # how an IPv6 socket names the IPv4 peer itself
        assert is_reachable(str(address))
    else:
        assert is_reachable(str(address)) == address.is_global


@given(bits)
def test_the_local_use_nat64_prefix_is_internal_as_a_whole(noise):
    address = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b:1::")) | noise & (2**80 - 1))
    assert not is_reachable(str(address))


@given(bits)
def test_an_ipv6_address_wrapping_nothing_is_judged_by_is_global(value):
    address = ipaddress.IPv6Address(value)
    if wrapped_ipv4(address) is None and address not in ipaddress.ip_network("64:ff9b:1::/48"):
        assert is_reachable(str(address)) == address.is_global


@given(ipv4s)
def test_an_ipv4_address_is_judged_by_is_global(v4):
    assert is_reachable(str(v4)) == v4.is_global


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::7f00:1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b:1::808:808",
        "2002:7f00:1::1",
        "2002:a00:1::",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
        "::127.0.0.1",
        "::ffff:0:10.0.0.1",
        "::ffff:127.0.0.1",
    ],
)
def test_the_wrappers_python_calls_global_are_internal(address):
    assert not is_reachable(address)


def test_a_refusal_names_the_ipv4_address_an_address_leads_to():
    assert describe("64:ff9b::7f00:1") == "64:ff9b::7f00:1, which leads to 127.0.0.1"
    assert describe("::1") == "::1"
    assert describe("10.0.0.1") == "10.0.0.1"
