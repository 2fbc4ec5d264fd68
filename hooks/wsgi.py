"""Webhook URLs answered in front of Django's request handling: what gunicorn serves (config/wsgi.py).

A webhook is the busiest request the service gets, and it needs none of what
Django does for pages: sessions, CSRF, users, messages, static files, URL
resolving, request and response objects. Measured under gunicorn, that
machinery cost a webhook about as much CPU as storing it
(benchmarks/RESULTS.md). So a request for /automation-{key} or
/webhook/automation-{key} on a host that serves HOOKS_URL is answered here,
by the same function Django's view calls (hooks.receiver), with the headers
Django's middleware would have added. Everything else goes to Django
untouched: other paths and hosts, a mounted SCRIPT_NAME, a host taken from
X-Forwarded-Host, and a plain-http request that SECURE_SSL_REDIRECT would
redirect. Only the body of every request is put behind its deadline and its
declared length first (hooks/bodies.py).
"""
import logging
from http import HTTPStatus

from django.conf import settings
from django.core import signals
from django.http.request import split_domain_port, validate_host

from config.hosts import normalize_host, roles_by_host
from hooks import bodies, receiver

logger = logging.getLogger("django.request")
PREFIXES = ("/automation-", "/webhook/automation-")


class WebhookEntry:
    """A WSGI application: webhook requests here, all others to the Django application it wraps."""

    def __init__(self, django_application):
        self.django_application = django_application

    def __call__(self, environ, start_response):
        # Every body, a webhook's or a page's, comes whole and in time or not at all (hooks/bodies.py).
        body = bodies.bound(environ)
        try:
            key = webhook_key(environ)
            if key is None:
                return self.django_application(environ, start_response)
            reply = self._answer(environ, key)
        finally:
            if body is not None:
                body.close()
        start_response(f"{reply.status} {HTTPStatus(reply.status).phrase}", response_headers(environ, reply))
        return [reply.body]

    def _answer(self, environ: dict, key: str) -> receiver.Reply:
        # As Django's handler does: its receivers replace a broken or expired database connection.
        signals.request_started.send(sender=self.__class__, environ=environ)
        try:
            return receiver.receive(environ, key)
        except Exception:
            logger.exception("Internal Server Error: %s", environ.get("PATH_INFO"), extra={"status_code": 500})
            return receiver.Reply(500)
        finally:
            signals.request_finished.send(sender=self.__class__)


def response_headers(environ: dict, reply: receiver.Reply) -> list[tuple[str, str]]:
    """The reply's headers with those Django's middleware would have added, its length and type."""
    headers = [*reply.headers, *_security_headers(environ), ("Content-Length", str(len(reply.body)))]
    if reply.content_type:
        headers.append(("Content-Type", reply.content_type))
    return headers


def webhook_key(environ: dict) -> str | None:
    """The key of a webhook request this entry answers ("" for a malformed one), or None to hand it to Django."""
    path = environ.get("PATH_INFO", "")
    if not path.startswith(PREFIXES) or environ.get("SCRIPT_NAME"):
        return None
    if settings.USE_X_FORWARDED_HOST and "HTTP_X_FORWARDED_HOST" in environ:
        return None
    host = _host(environ)
    roles = roles_by_host(settings.BASE_URL, settings.HOOKS_URL, settings.MCP_URL).get(normalize_host(host), ())
    if "hooks" not in roles or not validate_host(split_domain_port(host)[0], settings.ALLOWED_HOSTS):
        return None
    if settings.SECURE_SSL_REDIRECT and not _is_secure(environ):
        return None
    key = path.partition("automation-")[2]
    return "" if "/" in key else key


def _host(environ: dict) -> str:
    """The request's host as Django reads it when no proxy header is trusted."""
    if host := environ.get("HTTP_HOST"):
        return host
    port = str(environ.get("SERVER_PORT", ""))
    default = "443" if environ.get("wsgi.url_scheme") == "https" else "80"
    return environ.get("SERVER_NAME", "") + ("" if port in ("", default) else f":{port}")


def _is_secure(environ: dict) -> bool:
    if settings.SECURE_PROXY_SSL_HEADER:
        header, secure_value = settings.SECURE_PROXY_SSL_HEADER
        forwarded = environ.get(header)
        if forwarded is not None:
            return forwarded.split(",", 1)[0].strip() == secure_value
    return environ.get("wsgi.url_scheme") == "https"


def _security_headers(environ: dict) -> list[tuple[str, str]]:
    """What SecurityMiddleware and XFrameOptionsMiddleware add to every response, from the same settings."""
    headers = []
    if settings.SECURE_HSTS_SECONDS and _is_secure(environ):
        value = f"max-age={settings.SECURE_HSTS_SECONDS}"
        if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS:
            value += "; includeSubDomains"
        if settings.SECURE_HSTS_PRELOAD:
            value += "; preload"
        headers.append(("Strict-Transport-Security", value))
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append(("X-Content-Type-Options", "nosniff"))
    if policy := settings.SECURE_REFERRER_POLICY:
        values = [part.strip() for part in policy.split(",")] if isinstance(policy, str) else policy
        headers.append(("Referrer-Policy", ",".join(values)))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append(("Cross-Origin-Opener-Policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY))
    headers.append(("X-Frame-Options", settings.X_FRAME_OPTIONS.upper()))
    return headers
