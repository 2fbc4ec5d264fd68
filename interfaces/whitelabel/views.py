"""The logo of a white-label domain, served from that domain (/brand/logo) for its pages to show."""

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from django.views.decorators.http import condition, require_safe

from interfaces.whitelabel import selectors
from interfaces.whitelabel.logos import Logo

# A page names the logo with its version (?v=digest): that URL's bytes never change, so it is kept a day; the bare
# URL, or an older version's, is revalidated by its ETag on every use.
VERSIONED_CACHE = "public, max-age=86400"
UNVERSIONED_CACHE = "public, no-cache"


def logo_url(digest: str) -> str:
    """The path of the logo's version with this digest, on the white-label domain."""
    return f"/brand/logo?v={digest}"


def logo_response(request: HttpRequest, logo: Logo, cache_control: str) -> HttpResponse:
    """The logo's bytes as the type they were checked to be, never sniffed as another; 304 for its ETag."""
    response = HttpResponse(logo.content, content_type=logo.content_type)
    response["ETag"] = f'"{logo.digest}"'
    response["Cache-Control"] = cache_control
    response["X-Content-Type-Options"] = "nosniff"
    # An image opened by itself runs nothing; should a browser take it for a document all the same, it runs nothing.
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return get_conditional_response(request, etag=response["ETag"], response=response)


def _current_etag(request: HttpRequest) -> str | None:
    brand = getattr(request, "white_label_brand", None)
    return f'"{brand.logo_digest}"' if brand is not None and brand.logo_digest else None


@require_safe
@condition(etag_func=_current_etag)  # a cache that holds the current logo gets its 304 without a query
def logo(request: HttpRequest) -> HttpResponse:
    found = selectors.logo_of(request.white_label_owner_id)
    if found is None:
        raise Http404()
    versioned = request.GET.get("v") == found.digest
    return logo_response(request, found, VERSIONED_CACHE if versioned else UNVERSIONED_CACHE)
