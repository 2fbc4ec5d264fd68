"""The low-rate limits (sign-in, forms, chat, approvals, client registration), counted with django-ratelimit.

Each counted request adds one to fixed-window counters in the shared cache
(Redis in production), one per (group, identity): a client address
(catalog.ratelimits.client_key: TRUSTED_PROXY_COUNT, IPv6 per /64), a user
name, a conversation, a widget. The caller decides which requests count.

A counter that cannot be reached lets the request through, with a warning:
an outage of Redis must not lock staff out of admin, close every form or
silence every widget; these limits slow abuse down, they guard no secret.
RATELIMIT_ENABLE=0 turns them all off, with the feed's.
"""

import logging
from collections.abc import Iterable

from django.http import HttpRequest
from django_ratelimit.core import get_usage

logger = logging.getLogger(__name__)


def retry_after(request: HttpRequest, counters: Iterable[tuple[str, str, str]], *, what: str) -> int | None:
    """Count this request on each (group, identity, rate); None while under every limit, else the seconds to wait.

    Counting stops at the first limit passed, so a refused request does not
    also use up the allowance of the counters after it. `what` names the
    counter in the warning logged when the cache cannot be reached.
    """
    for group, identity, rate in counters:
        try:
            usage = get_usage(
                request,
                group=group,
                key=lambda _group, _request, identity=identity: identity,
                rate=rate,
                method=get_usage.ALL,
                increment=True,
            )
        except Exception:  # noqa: BLE001 - whatever the cache raised
            logger.warning("%s counter unreachable; letting the request through", what, exc_info=True)
            return None
        if usage and usage["should_limit"]:
            return max(1, usage["time_left"])
    return None
