"""The security headers of every answer, set in this one place for Django's answers and the hooks process's.

Django's SecurityMiddleware and XFrameOptionsMiddleware each add their
headers from settings; the hooks process answers webhooks without Django
(hooks/asgi.py). Both take them from security_headers(), so the two set the
same headers without the hooks process asking Django per route: Django's
answers through SecurityHeadersMiddleware, the hooks process's directly.

SecurityHeadersMiddleware sits right after Django's SecurityMiddleware, which
stays for its https redirect and for Django's deploy checks; on every answer
that passes through this one first, Django's finds each header already set
and adds nothing (it adds only missing ones). X-Frame-Options is set here
rather than by XFrameOptionsMiddleware, and a response marked
xframe_options_exempt (Django's decorator, page_headers.framed_by) goes
without it, as there.
"""

import functools

from django.conf import settings
from django.core.signals import setting_changed


@functools.cache
def security_headers(secure: bool) -> tuple[tuple[str, str], ...]:
    """The headers every answer carries, by the settings Django's middleware reads; HSTS only over https."""
    headers = []
    if secure and settings.SECURE_HSTS_SECONDS:
        value = f"max-age={settings.SECURE_HSTS_SECONDS}"
        value += "; includeSubDomains" if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS else ""
        value += "; preload" if settings.SECURE_HSTS_PRELOAD else ""
        headers.append(("Strict-Transport-Security", value))
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append(("X-Content-Type-Options", "nosniff"))
    if policy := settings.SECURE_REFERRER_POLICY:
        values = policy.split(",") if isinstance(policy, str) else policy
        headers.append(("Referrer-Policy", ",".join(value.strip() for value in values)))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append(("Cross-Origin-Opener-Policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY))
    headers.append(("X-Frame-Options", getattr(settings, "X_FRAME_OPTIONS", "DENY").upper()))
    return tuple(headers)


setting_changed.connect(lambda **kwargs: security_headers.cache_clear(), weak=False, dispatch_uid="edge.headers")


class SecurityHeadersMiddleware:
    """Adds security_headers() to each of Django's answers that does not set its own (see the module)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        exempt = getattr(response, "xframe_options_exempt", False)
        for name, value in security_headers(request.is_secure()):
            if name not in response and not (exempt and name == "X-Frame-Options"):
                response.headers[name] = value
        return response
