"""Submission limits of forms (django-ratelimit): per visitor's IP on each form, and per form.

Hosted forms count under their automation; the forms of session pages and
one-time links count under their automation's own scopes, with the defaults.

Every POST counts, valid or not, before its body is read. Defaults are
FORM_RATE_IP and FORM_RATE_FORM; a form's own `limits` (per_ip, per_form)
replace them. Past either, the visitor gets the 429 page with Retry-After.
A counter that cannot be reached lets the submission through, as sign-in's
do (config/sign_in.py): an outage of Redis must not close every form.
"""

import logging

from django.conf import settings
from django_ratelimit.core import get_usage

from catalog.ratelimits import client_key

logger = logging.getLogger(__name__)


def retry_after(request, *, scope: str, limits: dict) -> int | None:
    """Seconds the visitor must wait when a limit is passed; None when the submission may go on."""
    counted = (
        (f"form-ip:{scope}", lambda group, request: client_key(request), limits.get("per_ip", settings.FORM_RATE_IP)),
        (f"form:{scope}", lambda group, request: "all", limits.get("per_form", settings.FORM_RATE_FORM)),
    )
    for group, key, rate in counted:
        try:
            usage = get_usage(request, group=group, key=key, rate=rate, method="POST", increment=True)
        except Exception:
            logger.warning("form submission counter unreachable; letting the submission through", exc_info=True)
            return None
        if usage and usage["should_limit"]:
            return max(1, usage["time_left"])
    return None
