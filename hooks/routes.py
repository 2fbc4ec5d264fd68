"""What Django would do with a webhook request on a route, learnt once per route from Django's own answer.

The hooks process answers webhooks without Django, yet as Django would,
with no copy of its middleware (docs/webhooks.md, "The hooks process").
"""

import asyncio

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.signals import setting_changed
from django.http import HttpRequest

from config import process_cache

_learnt = process_cache.named("hooks.webhook_routes", max_size=256)
setting_changed.connect(lambda **kwargs: _learnt.clear(), weak=False, dispatch_uid="hooks.routes")


async def django_headers(scope: dict, headers: dict, django) -> tuple | bool:
    """The headers (bytes pairs) Django's middleware adds to a webhook's answer on this request's route (scheme,
    server, path prefix, host headers), or False when Django would not hand the request to the webhook view as it
    is (another host, a redirect, a refusal). Learnt once per route from the ASGI application django."""
    route = (scope.get("scheme", "http"), tuple(scope.get("server") or ()), scope["path"].startswith("/webhook/"))
    route += tuple(headers.get(name) for name in _host_headers())
    if (learnt := _learnt.get(route)) is None:
        learnt = await _learn(scope, headers, django)
        if learnt is None:  # Django failed to answer (a database down, say): this request goes to Django, unlearnt
            return False
        _learnt.set(route, learnt)
    return learnt


async def _learn(scope: dict, headers: dict, django) -> tuple | bool | None:
    """Django answers a probe: the route's host headers and a POST with no body to the key "", which the webhook
    view alone answers with no Content-Type: 404 (answers.MISS), or 503 in maintenance. None: it answered 500."""
    host_headers = {name: headers[name] for name in _host_headers() if name in headers}
    request = HttpRequest()
    request.META = {"HTTP_" + name.upper().replace("-", "_"): value for name, value in host_headers.items()}
    request.META["SERVER_NAME"], request.META["SERVER_PORT"] = map(str, scope.get("server") or ("", ""))
    try:
        request.get_host()  # a host that is not allowed goes to Django, which refuses and logs it there, once
    except DisallowedHost:
        return False
    path = scope["path"][: scope["path"].index("automation-")] + "automation-"
    sent = [(name.encode(), value.encode("latin-1")) for name, value in host_headers.items()]
    probe = {**scope, "method": "POST", "path": path, "raw_path": path.encode(), "query_string": b"", "headers": sent}
    body = [{"type": "http.request", "body": b"", "more_body": False}]
    answer = {}

    async def receive():
        return body.pop() if body else await asyncio.get_running_loop().create_future()  # never a disconnect

    async def send(message):
        if message["type"] == "http.response.start":
            answer.update(message)

    await django({**probe, "client": None}, receive, send)
    status, names = answer.get("status", 500), [name.lower() for name, _ in answer.get("headers", ())]
    if status not in (404, 503) or b"content-type" in names:
        return None if status >= 500 else False
    return tuple((name.lower(), value) for name, value in answer["headers"] if name.lower() != b"content-length")


def _host_headers() -> tuple[str, ...]:
    """The request headers Django reads a host and scheme from (some only when settings say so)."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    proxy_header = [proxy[0].removeprefix("HTTP_").replace("_", "-").lower()] if proxy else []
    return ("host", "x-forwarded-host", "x-forwarded-port", *proxy_header)
