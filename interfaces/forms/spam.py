"""Spam protection of forms without a third party: a honeypot field and a minimum time between showing and sending.

A robot that fills every input fills the honeypot, which people never see;
one that posts at once sends the form back sooner than FORM_MIN_FILL_SECONDS
after the signed time the page was shown at. Rate limits are in
edge/limits.py.
"""

import time

from django.conf import settings
from django.core import signing

HONEYPOT = "fg-website"  # field names of the list cannot hold a hyphen: no clash
SHOWN = "fg-shown"
_SALT = "interfaces.form-shown"
_STALE_SECONDS = 24 * 3600


def shown_token(scope: str) -> str:
    """A signed record of when this form (scope) was shown, carried by the form as a hidden input."""
    return signing.dumps({"s": scope, "t": time.time()}, salt=_SALT, compress=False)


def is_honeypot_hit(data) -> bool:
    return bool(data.get(HONEYPOT))


def filled_too_fast(data, scope: str) -> bool:
    """True when the form came back too soon after it was shown, or without a valid record of when that was."""
    try:
        shown = signing.loads(data.get(SHOWN, ""), salt=_SALT, max_age=_STALE_SECONDS)
    except signing.BadSignature:  # also a token too old to trust
        return True
    if not isinstance(shown, dict) or shown.get("s") != scope or not isinstance(shown.get("t"), (int, float)):
        return True
    return time.time() - shown["t"] < settings.FORM_MIN_FILL_SECONDS
