"""Feed rate limits (SPEC 4.1, 8): per client IP, IPv6 per /64, fixed windows counted in the cache.

Three policies: "list" (one counter shared by /apps and /apps/{slug}),
"logo" and "bulk", their rates set by FEED_RATE_LIST, FEED_RATE_LOGO and
FEED_RATE_BULK. A cache that cannot be reached lets requests through (and
logs it): the feed is public data and its availability matters more than
the limit.

Counters live in the shared cache (Redis in production), one per policy,
client and window. Each window is offset per client, so that clients do not
all get their allowance back in the same second.

A web process claims units of a counter in batches ("leases") and hands them
out from memory, so a client that keeps calling costs a cache round trip only
every few requests; a round trip per request cost half the feed's throughput
(benchmarks/RESULTS.md). Units are counted when claimed, so the limit holds
across any number of processes; the price is that units one process claimed
and did not use are lost to the client's requests served by other processes:
at most (processes - 1) x (batch - 1) per window. The first claim of a window
is a single unit and batches then double up to limit/50 (6 units of the
list policy's 300), so an occasional client is counted exactly.
"""

import logging
import threading
import time
import zlib
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from edge import process_cache
from edge.clients import client_key
from edge.process_cache import ProcessCache

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


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Counters outlive their window by this much, so a clock a little behind
# another process's never recreates a counter that window already used.
_GRACE_SECONDS = 60
# Leases one process keeps at most: clients of one window beyond that lose their spare units.
MAX_LEASES = 4096


@lru_cache(maxsize=16)
def parse_rate(rate: str) -> tuple[int, int]:
    """'300/5m' -> (300, 300): the limit and the window in seconds (validated by config.env.env_rate)."""
    count, per = rate.split("/")
    return int(count), int(per[:-1] or 1) * _UNITS[per[-1]]


def window_end(identity: str, period: int, now: int) -> int:
    """The end (epoch seconds) of the identity's window that contains now; windows are offset per identity."""
    offset = zlib.crc32(identity.encode()) % period
    return now - (now - offset) % period + period


@dataclass
class _Lease:
    batch: int  # the size of the last claim
    next: int = 0  # the next unit to hand out
    last: int = -1  # the last unit claimed
    claiming: bool = False  # a thread is claiming more; the others wait for its units


class Leases:
    """The units of shared counters this process has claimed and not yet handed out, each kept until its window ends.

    memory: where the leases are kept (a registered process cache for the
    process's own table; a table of its own by default, as another process
    would have). A full table forgets the lease claimed longest ago, and its
    spare units with it.
    """

    def __init__(self, memory: ProcessCache | None = None):
        self._leases = memory if memory is not None else ProcessCache("leases", max_size=MAX_LEASES)
        self._lock = threading.Lock()
        self._claimed = threading.Condition(self._lock)

    def take(self, key: str, limit: int, now: int, end: int) -> int:
        """The number of this request in its window: a unit from the lease, or from a new claim.

        One thread at a time claims for a key; threads of the same process
        that need a unit meanwhile wait for its batch rather than claim their
        own, whose spare units would be lost to the client.
        """
        with self._claimed:
            while True:
                lease = self._leases.get(key)
                if lease is not None and lease.next <= lease.last:
                    lease.next += 1
                    return lease.next - 1
                if lease is None or not lease.claiming:
                    break
                self._claimed.wait(1.0)
            if lease is None:
                lease = _Lease(batch=0)
                self._leases.set(key, lease, seconds=end - now)
            batch = 1 if lease.batch == 0 else min(lease.batch * 2, max(1, limit // 50))
            lease.claiming = True
        try:
            last = _claim(key, batch, end - now + _GRACE_SECONDS)  # outside the lock: it waits on the network
        finally:
            with self._claimed:
                lease.claiming = False
                self._claimed.notify_all()
        with self._claimed:
            lease.batch, lease.next, lease.last = batch, last - batch + 2, last
            return last - batch + 1


def _claim(key: str, units: int, timeout: int) -> int:
    """Count units on the shared counter, created with the timeout when missing; the new total."""
    if hasattr(cache, "incr_with_expiry"):  # overrides.django_cache.RedisCache: one round trip
        return cache.incr_with_expiry(key, units, timeout)
    cache.add(key, 0, timeout)
    return cache.incr(key, units)  # overrides.django_cache.FileCache keeps the expiry; Django's incr would reset it


_leases = Leases(process_cache.named("catalog.feed_rate_leases", max_size=MAX_LEASES))


def consume(request: HttpRequest, policy: str) -> Usage | None:
    """Count this request against the policy; None when limits are off or the counter is unreachable."""
    if not settings.RATELIMIT_ENABLE:
        return None
    limit, period = parse_rate(getattr(settings, POLICY_SETTINGS[policy]))
    identity = client_key(request)
    now = int(time.time())
    end = window_end(identity, period, now)
    try:
        count = _leases.take(f"feed-rl:{policy}:{period}:{identity}:{end}", limit, now, end)
    except Exception:
        logger.warning("rate limit counter unreachable; letting the request through", exc_info=True)
        return None
    return Usage(policy, limit, period, count, max(1, end - now))
