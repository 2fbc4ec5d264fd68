"""Feed rate limits (SPEC 4.1, 8): per client IP, IPv6 per /64, counted with django-ratelimit.

Three policies: "list" (one counter shared by /apps and /apps/{slug}),
"logo" and "bulk", their rates set by FEED_RATE_LIST, FEED_RATE_LOGO and
FEED_RATE_BULK. A cache that cannot be reached lets requests through (and
logs it): the feed is public data and its availability matters more than
the limit.
"""
import ipaddress
import logging
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import _split_rate, get_usage

logger = logging.getLogger(__name__)

POLICY_SETTINGS = {"list": "FEED_RATE_LIST", "logo": "FEED_RATE_LOGO", "bulk": "FEED_RATE_BULK"}


@dataclass(frozen=True)
class Usage:
    policy: str
    limit: int
    window: int  # seconds
    count: int
    reset: int  # seconds until the current window ends

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.count)

    def headers(self) -> dict[str, str]:
        """IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers)."""
        return {
            "RateLimit-Policy": f'"{self.policy}";q={self.limit};w={self.window}',
            "RateLimit": f'"{self.policy}";r={self.remaining};t={self.reset}',
        }


def client_address(request: HttpRequest) -> str:
    """The client's IP: REMOTE_ADDR, or the X-Forwarded-For entry the trusted proxies vouch for.

    With TRUSTED_PROXY_COUNT = n, the nth address from the right end of
    X-Forwarded-For is the one the outermost trusted proxy saw; anything left
    of it was written by the client and is ignored.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            candidate = hops[-min(proxies, len(hops))]
            try:
                ipaddress.ip_address(candidate)
                return candidate
            except ValueError:
                logger.warning("ignoring malformed X-Forwarded-For entry %r", candidate[:64])
    return remote


def client_key(request: HttpRequest) -> str:
    """The rate-limit identity: an IPv4 address, or the /64 network of an IPv6 address."""
    address = client_address(request)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6:
        if ip.ipv4_mapped:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def consume(request: HttpRequest, policy: str) -> Usage | None:
    """Count this request against the policy; None when limits are off or the counter is unreachable."""
    rate = getattr(settings, POLICY_SETTINGS[policy])
    try:
        usage = get_usage(
            request, group=f"feed-{policy}", key=lambda group, req: client_key(req), rate=rate, increment=True
        )
    except Exception:
        logger.warning("rate limit counter unreachable; letting the request through", exc_info=True)
        return None
    if usage is None or usage["time_left"] < 0:
        return None
    limit, window = _split_rate(rate)
    return Usage(policy, limit, window, usage["count"], max(1, usage["time_left"]))
