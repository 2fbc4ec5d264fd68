"""Django's WSGI handler as the web and hooks processes serve it: bodies bounded, any charset, HEAD without a body,
Connection: close after a body left unread.

Every request's body is put behind its deadline and its declared length
before Django reads it (edge/bodies.py): a body cut short, malformed or too
slow raises a BodyError (a 400, 408 or 413), never passes for a whole one.

Requests are overrides/wsgi_request.py's: a charset Django could not decode
with is ignored, and form data in another charset than UTF-8 is a 400.

Django leaves dropping a HEAD answer's body to the server (its own
development server and test client do it); gunicorn drops it too but logs a
warning for each one, as for every HEAD of a Django page or 404. Here the
body goes before it reaches the server; the headers, Content-Length
included, stay those of the GET.
"""

import threading

import django
from django.core.handlers.wsgi import WSGIHandler

from edge import bodies
from overrides import gunicorn_keepalive
from overrides.wsgi_request import Request

# The gunicorn request each thread of a web process is serving (edge/gunicorn.py's pre_request sets it).
serving = threading.local()


class Handler(WSGIHandler):
    request_class = Request

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
