"""Django's WSGI handler as the web and hooks processes serve it: bodies bounded, any charset, HEAD without a body,
Connection: close after a body left unread.

Every request's body is put behind its deadline and its declared length
before Django reads it (edge/bodies.py): a body cut short, malformed or too
slow raises a BodyError (a 400, 408 or 413), never passes for a whole one.

Requests are overrides/wsgi_request.py's: a charset Django could not decode
with is ignored, and form data in another charset than UTF-8 is a 400.

Paths whose answers are never pages (settings.LEAN_PATH_PREFIXES: the
catalog feed, the health check) go through the middleware less the pages'
own and static files' (LEAN_PATHS_SKIP_MIDDLEWARE): a feed request paid
about 150 us of CPU for a session, a user, a CSRF check, messages and a
language it never uses.

Django leaves dropping a HEAD answer's body to the server (its own
development server and test client do it); gunicorn drops it too but logs a
warning for each one, as for every HEAD of a Django page or 404. Here the
body goes before it reaches the server; the headers, Content-Length
included, stay those of the GET.
"""

import threading

import django
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler

from edge import bodies
from overrides import gunicorn_keepalive
from overrides.django_middleware_chain import ChainOf
from overrides.wsgi_request import Request

# The gunicorn request each thread of a web process is serving (edge/gunicorn.py's pre_request sets it).
serving = threading.local()


class LeanChain(ChainOf):
    """Django's handling of a request through settings.MIDDLEWARE less LEAN_PATHS_SKIP_MIDDLEWARE: for paths whose
    answers are never pages (LEAN_PATH_PREFIXES), which need no session, user, CSRF check, messages, language or
    static file. Every other middleware (security headers, host routing, CommonMiddleware, the outage's 503) runs."""

    def __init__(self):
        super().__init__([path for path in settings.MIDDLEWARE if path not in settings.LEAN_PATHS_SKIP_MIDDLEWARE])


class Handler(WSGIHandler):
    request_class = Request

    def __init__(self):
        super().__init__()
        self.lean = LeanChain()

    def __call__(self, environ, start_response):
        body = bodies.bound(environ)
        served = getattr(serving, "request", None)
        try:
            return super().__call__(environ, start_response)
        finally:
            serving.request = None
            if body is not None:
                # gunicorn skips less than DRAIN_MAX_BYTES of a body left unread (a 413, say), and otherwise
                # closes the connection after an answer that said keep-alive: a client sending its next request
                # on it lost it. The answer says Connection: close instead.
                if served is not None and body.leaves_at_least(gunicorn_keepalive.DRAIN_MAX_BYTES):
                    gunicorn_keepalive.close_after_answer(served)
                body.close()  # the request is over: what is left of its body is no longer watched

    def get_response(self, request):
        if request.path_info.startswith(settings.LEAN_PATH_PREFIXES):
            response = self.lean.get_response(request)
        else:
            response = super().get_response(request)
        if request.method == "HEAD":
            if response.streaming:
                response.streaming_content = []
            else:
                response.content = b""
        return response


def application() -> WSGIHandler:
    """Django's WSGI application (setting Django up first, as get_wsgi_application() does)."""
    django.setup(set_prefix=False)
    return Handler()
