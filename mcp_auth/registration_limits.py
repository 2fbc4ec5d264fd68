"""Rate limit of client registrations: OAUTH_REGISTRATION_RATE_IP per client IP (config/request_limits.py).

An MCP client registers once when a user adds the server, so a few an hour
from one address is plenty; the limit keeps a script from filling the
clients table between two purges. Every POST counts, valid or not.
"""

from django.conf import settings
from django.http import HttpRequest

from catalog.ratelimits import client_key
from config import request_limits


def retry_after(request: HttpRequest) -> int | None:
    """Count this registration; None if it may go on, else the seconds until the address may register again."""
    counters = [("oauth-register:ip", client_key(request), settings.OAUTH_REGISTRATION_RATE_IP)]
    return request_limits.retry_after(request, counters, what="client registration")
