"""Django's CSRF secrets and token masks, drawn with one read of the system's random source, not one per character.

Django (5.2) makes each CSRF secret, and the mask of each token it puts in a
page, with get_random_string: one secrets.choice() per character, that is
three Python calls and one system call each, 64 of them for a new visitor's
page. On a hosted form remembered by its process (interfaces/forms/blank_pages.py)
that is a large share of what its page costs beyond the empty view
(benchmarks/RESULTS.md). install() replaces the module's one function that
makes those strings, `_get_new_csrf_string`, private (Django has no setting
for it), so everything else, the masking, the cookie, the check of a POST,
stays Django's own.

The strings are as random as before: os.urandom is the source secrets uses,
and each byte below 248 (4 x 62) gives one of the 62 characters, so every
character is uniform and independent of the others; the bytes of 248 and
more are dropped.
"""

import os

from django.core.exceptions import ImproperlyConfigured
from django.middleware import csrf

WRITTEN_FOR = {"Django": "5.2.19"}

_ALPHABET = csrf.CSRF_ALLOWED_CHARS
_ACCEPTED_BELOW = 256 - 256 % len(_ALPHABET)
_LENGTH = csrf.CSRF_SECRET_LENGTH


def new_csrf_string() -> str:
    """CSRF_SECRET_LENGTH characters of CSRF_ALLOWED_CHARS, each uniform and independent."""
    found = ""
    while len(found) < _LENGTH:  # 48 bytes leave fewer than 32 characters about once in 10^13 draws: read again
        drawn = os.urandom(_LENGTH + 16)
        found += "".join([_ALPHABET[byte % len(_ALPHABET)] for byte in drawn if byte < _ACCEPTED_BELOW])
    return found[:_LENGTH]


def install() -> None:
    """Make Django's CSRF middleware draw its strings with new_csrf_string; refuse to start if it has no such hook."""
    if not callable(getattr(csrf, "_get_new_csrf_string", None)) or len(_ALPHABET) != 62:
        raise ImproperlyConfigured(
            "django.middleware.csrf changed: overrides/django_csrf.py no longer fits this Django version; remove it"
        )
    csrf._get_new_csrf_string = new_csrf_string
