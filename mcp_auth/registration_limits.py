"""Rate limit of client registrations (django-ratelimit): OAUTH_REGISTRATION_RATE_IP per client IP.

An MCP client registers once when a user adds the server, so a few an hour
from one address is plenty; the limit keeps a script from filling the
clients table between two purges. Every POST counts, valid or not. A counter
that cannot be reached lets the registration through (with a warning), as
sign-in does. RATELIMIT_ENABLE=0 turns it off with the others.
"""

import logging

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from catalog.ratelimits import client_key

logger = logging.getLogger(__name__)


def retry_after(request: HttpRequest) -> int | None:
    """Count this registration; None if it may go on, else the seconds until the address may register again."""
    try:
        usage = get_usage(
            request,
            group="oauth-register:ip",
            key=lambda group, request: client_key(request),
            rate=settings.OAUTH_REGISTRATION_RATE_IP,
            increment=True,
        )
    except Exception:  # noqa: BLE001
        logger.warning("client registration counter unreachable; letting the registration through", exc_info=True)
        return None
    if usage and usage["should_limit"]:
        return max(1, usage["time_left"])
    return None
