"""A hosted form's blank page for signed-out visitors: rendered once per process, put together per request.

Once the form's automation was remembered (interfaces/forms/selectors.py), running
the page's templates was most of what a GET of /form/{key} cost
(benchmarks/RESULTS.md). Two signed-out visitors of the same blank form, on
the same host, in the same language, get the same page but for two values:
the CSRF token and the signed time the form was shown at (interfaces/forms/spam.py).
So the page is rendered once with a marker in place of each, cut there, and
every request joins the pieces around its own two values. The token still
comes from Django's get_token(), so the CSRF cookie is set as for any page,
and the shown time is signed for each request, as before.

The markers are random per process: no text an automation's owner writes can
hold one. Both values are URL-safe base64 and colons, which HTML escaping
leaves as they are, so the page is byte for byte what rendering it would give.
"""

import re
import secrets
from collections.abc import Hashable

from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.urls import get_script_prefix
from django.utils.translation import get_language

from edge import process_cache

TEMPLATE = "interfaces/form_page.html"
_MARK = "fgslot" + secrets.token_hex(16)
CSRF_SLOT = _MARK + "csrf"
SHOWN_SLOT = _MARK + "shown"
_SLOTS = re.compile(f"({re.escape(CSRF_SLOT)}|{re.escape(SHOWN_SLOT)})")
# A page is remembered under its automation's version: an edit makes a new entry and the old one ages out.
_pages = process_cache.named("interfaces.blank_form_pages", max_size=1000, seconds=300)


def page_key(request, version: Hashable) -> tuple:
    """What a blank page depends on besides the automation's version: language, URLconf (the host), path prefix, and
    on a white-label domain the name and logo it shows (changed by its owner without a new version)."""
    urlconf, brand = getattr(request, "urlconf", None), getattr(request, "white_label_brand", None)
    return (version, get_language(), urlconf, get_script_prefix(), brand)


def render(request, version: Hashable, context: dict, shown: str) -> str:
    """The blank page of context (the form's own texts and fields, rendered once per version), with this visitor's
    CSRF token and shown time. For signed-out visitors only: a signed-in one's page names them."""
    key = page_key(request, version)
    pieces = _pages.get(key)
    if pieces is None:
        page = render_to_string(TEMPLATE, {**context, "csrf_token": CSRF_SLOT, "shown": SHOWN_SLOT}, request)
        pieces = _SLOTS.split(page)
        _pages.set(key, pieces)
    values = {CSRF_SLOT: get_token(request), SHOWN_SLOT: shown}
    return "".join(values[piece] if index % 2 else piece for index, piece in enumerate(pieces))
