"""Content-Security-Policy of every HTML page, and the one way a view lets a page be framed.

Every HTML page (a text/html response with a body) gets a policy allowing scripts, styles, images,
fonts and connections from this site only, no inline script, no plugins,
forms posting only here, no <base>, and no framing (frame-ancestors 'none'),
beside `X-Frame-Options: DENY` (edge/headers.py). A response that already carries a
Content-Security-Policy keeps it (admin's pages, a view that writes its own).

A page meant to be framed (the chat widget's frame) is decorated with
@framed_by(origins_for_request): the function gets the request and returns
the origins allowed to frame it ("*" for any https or http page). The page
then drops X-Frame-Options, which cannot name origins, and relies on
frame-ancestors alone.

never_cache is Django's decorator of the same name for the busiest pages:
the same two headers, written as they come out of Django's, without parsing
and patching Cache-Control twice and formatting the date for every request.
"""

import time
from collections.abc import Callable, Iterable
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers
from django.utils.http import http_date

BASE_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
# Any page of the web: what "any origin" means for frame-ancestors ('*' would also allow data: and blob: parents).
ANY_ORIGIN = ("https:", "http:")


def policy(frame_ancestors: Iterable[str] | None = None, form_action: Iterable[str] = ()) -> str:
    """The header value; frame_ancestors (origins, or "*") replaces 'none' when given and not empty; form_action
    (origins) are allowed beside 'self', for a form whose answer redirects there (browsers apply form-action to the
    redirect too)."""
    directives = dict(BASE_POLICY)
    if form_action:
        directives["form-action"] = " ".join(["'self'", *form_action])
    if frame_ancestors is not None:
        origins = list(frame_ancestors)
        if "*" in origins:
            origins = list(ANY_ORIGIN)
        if origins:
            directives["frame-ancestors"] = " ".join(origins)
    return "; ".join(f"{name} {value}" for name, value in directives.items())


_DEFAULT = policy()


def is_page(response: HttpResponse) -> bool:
    """An HTML document with a body: not JSON, and not the empty answers of webhook URLs (text/html by default).

    Webhook and web service answers must be the same whichever process
    sends them (hooks/asgi.py sends no page headers), and an empty body runs
    nothing a policy could restrict.
    """
    if not response.get("Content-Type", "").startswith("text/html"):
        return False
    return response.streaming or bool(response.content)


def framed_by(origins_for: Callable[[HttpRequest], Iterable[str]]):
    """Let the decorated view's page be framed by the origins origins_for(request) returns ("*": any).

    The origins must each be scheme://host[:port] as the embedding page's
    origin reads; an empty list keeps the page unframeable.
    """

    def decorator(view):
        @wraps(view)
        def framed_view(request, *args, **kwargs):
            response = view(request, *args, **kwargs)
            origins = list(origins_for(request))
            if origins:
                response.csp_frame_ancestors = origins
                response.xframe_options_exempt = True  # read by edge.headers.SecurityHeadersMiddleware
            return response

        return framed_view

    return decorator


class ContentSecurityPolicyMiddleware:
    """Sets the policy on HTML responses that have none; reads response.csp_frame_ancestors (framed_by)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Content-Security-Policy" in response or not is_page(response):
            return response
        ancestors = getattr(response, "csp_frame_ancestors", None)
        response["Content-Security-Policy"] = _DEFAULT if ancestors is None else policy(ancestors)
        return response


# What django.utils.cache.add_never_cache_headers writes on a response that has neither header.
NEVER_CACHE_CONTROL = "max-age=0, no-cache, no-store, must-revalidate, private"
_expires = (0, "")  # (second, its HTTP date): formatting the date cost as much as the rest of the decorator


def _now_http_date() -> str:
    global _expires
    second = int(time.time())
    if _expires[0] != second:
        _expires = (second, http_date(second))  # one tuple, swapped whole: threads never see half of it
    return _expires[1]


def never_cache(view):
    """Django's never_cache for a sync view: Expires now and Cache-Control forbidding any cache to keep the page.

    A response that already has either header gets Django's own patching, so the result is always Django's.
    """

    @wraps(view)
    def uncached_view(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        if "Expires" in response or "Cache-Control" in response:
            add_never_cache_headers(response)
        else:
            response.headers["Expires"] = _now_http_date()
            response.headers["Cache-Control"] = NEVER_CACHE_CONTROL
        return response

    return uncached_view
