"""Sign-in throttling: password attempts counted per client IP and per user name (django-ratelimit).

Every sign-in POST counts, in the shared cache (Redis in production), against
two limits: SIGN_IN_RATE_IP per client address (catalog.ratelimits.client_key:
TRUSTED_PROXY_COUNT, IPv6 per /64) and SIGN_IN_RATE_USERNAME per user name,
folded to lower case. Past either, the attempt is refused with 429 before the
password is checked, so it tells a guesser nothing. The price of the per-name
limit: someone guessing at a name locks its owner out until the window ends.

A counter that cannot be reached lets the attempt through (with a warning):
admin holds the maintenance switch, which an outage of Redis must not lock.
RATELIMIT_ENABLE=0 turns these limits off with the feed's.
"""

import logging
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django_ratelimit.core import get_usage

from catalog.ratelimits import client_key

logger = logging.getLogger(__name__)


def _address(group: str, request: HttpRequest) -> str:
    return client_key(request)


def _username(group: str, request: HttpRequest) -> str:
    return request.POST.get("username", "").strip().lower()


def throttled(view):
    """Wrap a sign-in view: its POSTs past either limit get 429 with Retry-After."""

    @wraps(view)
    def throttled_view(request: HttpRequest, *args, **kwargs):
        if request.method == "POST":
            limits = (
                ("sign-in:ip", _address, settings.SIGN_IN_RATE_IP),
                ("sign-in:username", _username, settings.SIGN_IN_RATE_USERNAME),
            )
            for group, key, rate in limits:
                try:
                    usage = get_usage(request, group=group, key=key, rate=rate, method="POST", increment=True)
                except Exception:
                    logger.warning("sign-in attempt counter unreachable; letting the attempt through", exc_info=True)
                    break
                if usage and usage["should_limit"]:
                    return refused(usage["time_left"])
        return view(request, *args, **kwargs)

    return throttled_view


def refused(retry_after: int) -> HttpResponse:
    response = HttpResponse("too many sign-in attempts; try again later\n", status=429, content_type="text/plain")
    response["Retry-After"] = str(max(1, retry_after))
    return response
