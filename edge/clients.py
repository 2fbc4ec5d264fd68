"""Who a request comes from, as every rate limit counts it: the feed's (catalog/ratelimits.py) and the low-rate
limits of edge/limits.py, the addresses approvals record, and webhook URLs' allow lists (hooks/signatures.py).

The address is REMOTE_ADDR, or the X-Forwarded-For entry TRUSTED_PROXY_COUNT
trusted proxies vouch for; an IPv6 client counts as its /64 network, since
one machine holds a whole /64 and could take a fresh counter per address.
"""

import ipaddress
import logging
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest

logger = logging.getLogger(__name__)


def client_address(request: HttpRequest) -> str:
    """The client's IP: REMOTE_ADDR, or the X-Forwarded-For entry the trusted proxies vouch for.

    With TRUSTED_PROXY_COUNT = n, the nth address from the right end of
    X-Forwarded-For is the one the outermost trusted proxy saw; anything left
    of it was written by the client and is ignored. Some proxies write the
    client's port too ("203.0.113.5:4711", "[2001:db8::1]:443"): the entry
    counts as its address, so a client cannot get a fresh counter per port.
    """
    return address_of(request.META.get("REMOTE_ADDR", ""), request.META.get("HTTP_X_FORWARDED_FOR", ""))


def address_of(remote: str, forwarded: str) -> str:
    """client_address from the peer's address and the X-Forwarded-For header, for a request Django has not built
    (a webhook on the hooks process's event loop, hooks/asgi.py)."""
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            candidate = hops[-min(proxies, len(hops))]
            address = _without_port(candidate)
            try:
                ipaddress.ip_address(address)
                return address
            except ValueError:
                logger.warning("ignoring malformed X-Forwarded-For entry %r", candidate[:64])
    return remote


def _without_port(entry: str) -> str:
    """The address of an X-Forwarded-For entry written as address:port or [IPv6]:port or [IPv6]."""
    if entry.startswith("["):
        address, bracket, port = entry[1:].partition("]")
        if bracket and (port == "" or (port[:1] == ":" and port[1:].isdigit())):
            return address
        return entry
    address, colon, port = entry.partition(":")
    if colon and port.isdigit():  # one colon only: a bare IPv6 address has several and no port
        return address
    return entry


def client_key(request: HttpRequest) -> str:
    """The rate-limit identity: an IPv4 address, or the /64 network of an IPv6 address."""
    return _identity(client_address(request))


@lru_cache(maxsize=4096)  # parsing an address costs more than the rest of a counted request
def _identity(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6:
        if ip.ipv4_mapped:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)
