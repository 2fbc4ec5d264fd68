"""Django's WSGIRequest with two of its private steps changed: the charset it decodes with, form data it refuses.

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

Django reads the charset in `_set_content_type_params`, called from
`__init__`, and parses form data in `_load_post_and_files`: both private,
and neither has a setting or a public hook (edge/handler.py serves this
request class through WSGIHandler's request_class).
"""

import codecs
import functools
import warnings

from django.core.exceptions import BadRequest
from django.core.handlers.wsgi import WSGIRequest
from django.utils.http import parse_header_parameters

WRITTEN_FOR = {"Django": "5.2.19"}

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
