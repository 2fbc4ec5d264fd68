"""Which webhook requests the hooks process answers itself, and which it hands to Django because Django would not
route them to a webhook: another host, a host not allowed, a redirect (docs/webhooks.md, "The hooks process").

Django's own view of webhooks is gone: a webhook is answered by one driver,
hooks/asgi.py. These are the checks Django's middleware makes before it picks
a URLconf (ALLOWED_HOSTS, SECURE_SSL_REDIRECT, PREPEND_WWW, the host's
role), made once per route (scheme, server, the headers Django reads a host
and scheme from) and remembered; SECURE_REDIRECT_EXEMPT's patterns match the
path, so they are matched for each request.
"""

import re

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.signals import setting_changed

from edge import hosts, process_cache
from overrides.django_request_host import SchemeRequest

_decided = process_cache.named("hooks.webhook_routes", max_size=256)
_REDIRECTED_UNLESS_EXEMPT = "redirected unless exempt"
setting_changed.connect(lambda **kwargs: _decided.clear(), weak=False, dispatch_uid="hooks.routes")


def answered_here(scope: dict, headers: dict) -> bool | None:
    """None when Django answers this webhook path (see the module); otherwise whether the request came over https."""
    route = (scope.get("scheme", "http"), tuple(scope.get("server") or ()))
    route += tuple(headers.get(name) for name in _host_headers())
    if (decided := _decided.get(route, _decided)) is _decided:
        decided = _decide(scope, headers)
        _decided.set(route, decided)
    if decided is _REDIRECTED_UNLESS_EXEMPT:  # the exemptions match the path, which differs by key
        path = scope["path"].lstrip("/")
        return False if any(re.search(pattern, path) for pattern in settings.SECURE_REDIRECT_EXEMPT) else None
    return decided


class _Request(SchemeRequest):
    """Enough of a request for Django's own answers to "which host?" and "over https?"."""

    def __init__(self, scope: dict, headers: dict):
        super().__init__(scope.get("scheme", "http"))
        self.path = scope["path"]
        sent = {name: headers[name] for name in _host_headers() if name in headers}
        self.META = {"HTTP_" + name.upper().replace("-", "_"): value for name, value in sent.items()}
        self.META["SERVER_NAME"], self.META["SERVER_PORT"] = map(str, scope.get("server") or ("", ""))


def _decide(scope: dict, headers: dict) -> bool | str | None:
    request = _Request(scope, headers)
    try:
        host = request.get_host()
    except DisallowedHost:  # Django refuses it with 400, and logs it there
        return None
    if "hooks" not in hosts.role_hosts().get(hosts.normalize_host(host), ()):
        return None  # Django routes it by its host: another role's URLconf, or a white-label domain's
    if settings.PREPEND_WWW and not host.startswith("www."):
        return None  # CommonMiddleware's redirect to www.
    secure = request.is_secure()
    if settings.SECURE_SSL_REDIRECT and not secure:
        return _REDIRECTED_UNLESS_EXEMPT  # SecurityMiddleware's redirect to https
    return secure


def _host_headers() -> tuple[str, ...]:
    """The request headers Django reads a host and scheme from (some only when settings say so)."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    proxy_header = [proxy[0].removeprefix("HTTP_").replace("_", "-").lower()] if proxy else []
    return ("host", "x-forwarded-host", "x-forwarded-port", *proxy_header)
