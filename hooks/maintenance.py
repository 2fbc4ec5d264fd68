"""Maintenance mode of the hook URLs: the MAINTENANCE_MODE setting, or the admin switch."""

from django.conf import settings
from django.db import DatabaseError

from edge import process_cache
from hooks.models import Maintenance

# The switch is read at most this often per process: a query per webhook
# would cost more than the rest of accepting it.
CHECK_SECONDS = 2.0
_switch = process_cache.named("hooks.maintenance", max_size=1)


def active() -> bool:
    if settings.MAINTENANCE_MODE:
        return True
    answer = _switch.get("active")
    if answer is None:
        answer = _switch.get("active", False, stale=True)
        # The last answer first, so that the other threads of the process keep it rather than all ask at once.
        _switch.set("active", answer, seconds=CHECK_SECONDS)
        try:
            answer = Maintenance.objects.filter(active=True).exists()
        except DatabaseError:
            return answer  # kept; accepting a delivery will tell whether the database is there
        _switch.set("active", answer, seconds=CHECK_SECONDS)
    return answer


def known() -> bool | None:
    """active() if it needs no query now, else None: for an event loop, which must not wait on the database."""
    if settings.MAINTENANCE_MODE:
        return True
    return _switch.get("active")


def reset() -> None:
    """Read the switch afresh on the next call (the admin's change, in this process at once); the last answer stays."""
    _switch.set("active", _switch.get("active", False, stale=True), seconds=0)
