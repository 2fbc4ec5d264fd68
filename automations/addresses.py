"""Which addresses an HTTP request step may reach: public ones, judged through any IPv4 address they wrap.

Several IPv6 ranges carry an IPv4 address inside them, and a translator,
relay or the host's own stack delivers packets sent there to that IPv4
address. Python's `is_global` judges the IPv6 address alone and calls most
of them global, so each is judged here by its IPv4 address as well:

- IPv4-mapped `::ffff:0:0/96` is how an IPv6 socket names an IPv4 peer: it
  is judged by its IPv4 address alone.
- IPv4-compatible `::/96` (deprecated), SIIT's IPv4-translated
  `::ffff:0:0:0/96`, NAT64's well-known prefix `64:ff9b::/96`: the last 32
  bits.
- 6to4 `2002::/16`: bits 16 to 47.
- Teredo `2001::/32`: the client's address, the last 32 bits inverted.
- NAT64's local-use prefix `64:ff9b:1::/48` (RFC 8215) is internal as a
  whole: where its IPv4 address sits depends on the prefix length its
  translator was given (RFC 6052: 32 to 96 bits), which cannot be seen from
  here, and the range is not globally reachable (IANA's special-purpose
  registry).

An address that wraps one is reachable only when both it and the IPv4 address
are global.
"""

import ipaddress

_COMPATIBLE = ipaddress.ip_network("::/96")
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


def wrapped_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address packets sent to ip reach through a translator, a relay or the host's stack, if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if (ip in _COMPATIBLE and int(ip) > 1) or ip in _TRANSLATED or ip in _NAT64:  # :: and ::1 wrap nothing
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client; ipaddress already inverts its bits
    return None


def is_reachable(address: str) -> bool:
    """True for a public address; internal ones (loopback, private, reserved...) and those wrapping one are not."""
    ip = ipaddress.ip_address(address)
    if ip.version == 4:
        return ip.is_global
    if ip in _NAT64_LOCAL:
        return False
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_global
    wrapped = wrapped_ipv4(ip)
    return ip.is_global and (wrapped is None or wrapped.is_global)


def describe(address: str) -> str:
    """The address as a refusal names it: with the IPv4 address it wraps, when it wraps one."""
    ip = ipaddress.ip_address(address)
    wrapped = wrapped_ipv4(ip) if ip.version == 6 else None
    return f"{address}, which leads to {wrapped}" if wrapped is not None else address
