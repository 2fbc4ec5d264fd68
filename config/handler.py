"""Django's WSGI handler as the web and hooks processes serve it: bodies bounded, any charset, HEAD without a body,
Connection: close after a body left unread.

Every request's body is put behind its deadline and its declared length
before Django reads it (edge/bodies.py): a body cut short, malformed or too
slow raises a BodyError (a 400, 408 or 413), never passes for a whole one.

Django takes the charset parameter of a request's Content-Type as its
encoding whenever Python's codec registry knows the name, and decodes the
query string and form data with it strictly. The registry also holds
transforms that are no text encoding (hex, base64, zlib, rot13),
encodings that cannot decode ASCII (utf-16), and some without the
"replace" error handler (idna): `charset=hex` made building
the request itself raise, a 500 on every URL before any view ran. Here a
charset is taken only when it decodes ASCII to itself; otherwise the
request keeps the default (UTF-8). Form data (application/x-www-form-urlencoded)
declared in any charset but UTF-8 is refused with 400, as Django refuses it.

Django leaves dropping a HEAD answer's body to the server (its own
development server and test client do it); gunicorn drops it too but logs a
warning for each one, as for every HEAD of a Django page or 404. Here the
body goes before it reaches the server; the headers, Content-Length
included, stay those of the GET.
"""

import codecs
import functools
import threading
import warnings

import django
from django.core.exceptions import BadRequest
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
from django.utils.http import parse_header_parameters
from gunicorn.http.parser import _DRAIN_MAX_BYTES

from edge import bodies

_ASCII = bytes(range(128))


class Request(WSGIRequest):
    def _load_post_and_files(self):
        try:
            super()._load_post_and_files()
        except BadRequest:
            # Form data in another charset than UTF-8 is a 400 (Django's choice, RFC 1866); the 400 page's CSRF
            # check reads the form again, and the same error there made the answer a 500.
            self._mark_post_parse_error()
            raise

    def _set_content_type_params(self, meta):
        self.content_type, self.content_params = parse_header_parameters(meta.get("CONTENT_TYPE", ""))
        charset = self.content_params.get("charset")
        if charset and decodes_ascii(charset):
            # Django refuses form data in any charset spelled other than "utf-8": UTF8, utf_8 and U8 are UTF-8 too.
            self.encoding = "utf-8" if codecs.lookup(charset).name == "utf-8" else charset


@functools.lru_cache(maxsize=64)
def decodes_ascii(charset: str) -> bool:
    """True for a charset Django can decode a query string and form data with: ASCII as itself, any byte replaced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unicode_escape warns of the escapes it finds
        try:
            bytes(range(256)).decode(charset, errors="replace")  # Django decodes form data with replacement
            return _ASCII.decode(charset) == _ASCII.decode("ascii")
        except (LookupError, UnicodeError, ValueError, TypeError):
            return False


# The gunicorn request each thread of a web process is serving (config/gunicorn.py's pre_request sets it).
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
                # gunicorn skips less than _DRAIN_MAX_BYTES of a body left unread (a 413, say), and otherwise
                # closes the connection after an answer that said keep-alive: a client sending its next request
                # on it lost it. The answer says Connection: close instead.
                if served is not None and body.leaves_at_least(_DRAIN_MAX_BYTES):
                    served.must_close = True
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
