"""Maintenance mode of the hook URLs: the MAINTENANCE_MODE setting, or the admin switch."""
import time

from django.conf import settings
from django.db import DatabaseError

from hooks.models import Maintenance

# The switch is read at most this often per process: a query per webhook
# would cost more than the rest of accepting it.
CHECK_SECONDS = 2.0
_memo = {"at": float("-inf"), "active": False}


def active() -> bool:
    if settings.MAINTENANCE_MODE:
        return True
    now = time.monotonic()
    if now - _memo["at"] >= CHECK_SECONDS:
        _memo["at"] = now  # first, so that the other threads of the process do not all ask at once
        try:
            _memo["active"] = Maintenance.objects.filter(active=True).exists()
        except DatabaseError:
            pass  # keep the last answer; accepting a delivery will tell whether the database is there
    return _memo["active"]


def known() -> bool | None:
    """active() if it needs no query now, else None: for an event loop, which must not wait on the database."""
    if settings.MAINTENANCE_MODE:
        return True
    if time.monotonic() - _memo["at"] >= CHECK_SECONDS:
        return None
    return _memo["active"]


def reset() -> None:
    _memo["at"] = float("-inf")
