"""What Django would do with a webhook request on a route, learnt once per route by running its own middleware.

The hooks process answers webhooks without Django, yet as Django would,
with no copy of its middleware (docs/webhooks.md, "The hooks process").
"""

import io

from a2wsgi.wsgi import build_environ
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.base import BaseHandler
from django.core.signals import setting_changed
from django.http import HttpResponse
from django.urls import Resolver404, ResolverMatch
from django.views.decorators.csrf import csrf_exempt

from config import process_cache
from config.handler import Request
from hooks import views

_learnt = process_cache.named("hooks.webhook_routes", max_size=256)
setting_changed.connect(lambda **kwargs: _learnt.clear(), weak=False, dispatch_uid="hooks.routes")


def key(scope: dict, headers: dict) -> tuple:
    """What Django's handling of a webhook request depends on: scheme, server, path prefix and host headers."""
    route = (scope.get("scheme", "http"), tuple(scope.get("server") or ()), scope["path"].startswith("/webhook/"))
    return route + tuple(headers.get(name) for name in _host_headers())


def known(route: tuple) -> tuple | bool | None:
    """learn()'s answer for the route if it is remembered, else None."""
    return _learnt.get(route)


def learn(route: tuple, scope: dict, headers: dict) -> tuple | bool:
    """The headers (bytes pairs) Django's middleware adds to a webhook's answer on this route, or False when
    Django would not hand the request to the webhook view as it is (another host, a redirect, a refusal)."""
    sent = [(name.encode(), headers[name].encode("latin-1")) for name in _host_headers() if name in headers]
    probe = {**scope, "method": "POST", "query_string": b"", "client": None, "headers": sent, "http_version": "1.1"}
    request = Request(build_environ(probe, io.BytesIO()))
    try:
        request.get_host()  # a host that is not allowed goes to Django, which refuses and logs it there, once
        response = _Probe().get_response(request)
    except DisallowedHost:
        response = None
    learnt = getattr(response, "reached_the_webhook_view", False) and tuple(
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in response.items()
        if name.lower() not in ("content-type", "content-length")
    )
    _learnt.set(route, learnt)
    return learnt


def _host_headers() -> tuple[str, ...]:
    """The request headers Django reads a host and scheme from (some only when settings say so)."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    proxy_header = [proxy[0].removeprefix("HTTP_").replace("_", "-").lower()] if proxy else []
    return ("host", "x-forwarded-host", "x-forwarded-port", *proxy_header)


@csrf_exempt
def _stand_in(request, reached: bool) -> HttpResponse:
    response = HttpResponse()
    # As the webhook view answers: never an HTML page, which middleware treats apart (CSP, Content-Language).
    del response["Content-Type"]
    response.reached_the_webhook_view = reached
    return response


class _Probe(BaseHandler):
    """Django's middleware chain, built from the settings of the moment, with a stand-in for the view."""

    def __init__(self):
        super().__init__()
        self.load_middleware()

    def resolve_request(self, request):
        try:
            reached = super().resolve_request(request).func is views.receive
        except Resolver404:
            reached = False
        request.resolver_match = ResolverMatch(_stand_in, (), {"reached": reached})
        return request.resolver_match
