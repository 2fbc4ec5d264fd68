"""Submission limits of forms (django-ratelimit): per visitor's IP on each form, and per form.

Hosted forms count under their automation; the forms of session pages and
one-time links count under their automation's own scopes, with the defaults.

Every POST counts, valid or not, before its body is read. Defaults are
FORM_RATE_IP and FORM_RATE_FORM; a form's own `limits` (per_ip, per_form)
replace them. Past either, the visitor gets the 429 page with Retry-After.
A counter that cannot be reached lets the submission through
(config/request_limits.py).
"""

from django.conf import settings

from catalog.ratelimits import client_key
from config import request_limits


def retry_after(request, *, scope: str, limits: dict) -> int | None:
    """Seconds the visitor must wait when a limit is passed; None when the submission may go on."""
    counters = (
        (f"form-ip:{scope}", client_key(request), limits.get("per_ip", settings.FORM_RATE_IP)),
        (f"form:{scope}", "all", limits.get("per_form", settings.FORM_RATE_FORM)),
    )
    return request_limits.retry_after(request, counters, what="form submission")
