"""Per-IP limits of the approval pages (django-ratelimit, counted in the shared cache).

A counter that cannot be reached lets the request through with a warning:
an outage of Redis must not lock approvers out. RATELIMIT_ENABLE=0 turns
these limits off with every other.
"""

import logging

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from catalog.ratelimits import client_key

logger = logging.getLogger(__name__)


def _address(group: str, request: HttpRequest) -> str:
    return client_key(request)


def retry_after(request: HttpRequest, *, group: str, rate_setting: str) -> int | None:
    """Count this request against the client IP's limit; None while under it, else the seconds to wait."""
    try:
        usage = get_usage(
            request,
            group=group,
            key=_address,
            rate=getattr(settings, rate_setting),
            method=get_usage.ALL,
            increment=True,
        )
    except Exception:
        logger.warning("rate-limit counter of %s unreachable; letting the request through", group, exc_info=True)
        return None
    if usage and usage["should_limit"]:
        return max(1, usage["time_left"])
    return None
