"""Per-IP limits of the approval pages and their JSON API (config/request_limits.py)."""

from django.conf import settings
from django.http import HttpRequest

from catalog.ratelimits import client_key
from config import request_limits


def retry_after(request: HttpRequest, *, group: str, rate_setting: str) -> int | None:
    """Count this request against the client IP's limit; None while under it, else the seconds to wait."""
    counters = [(group, client_key(request), getattr(settings, rate_setting))]
    return request_limits.retry_after(request, counters, what=f"rate-limit ({group})")
