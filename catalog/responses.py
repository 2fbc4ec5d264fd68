"""HTTP responses of the feed: stored documents with conditional GET, and each error of SPEC 7.1."""

import hashlib
import re

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import get_conditional_response, patch_vary_headers

from catalog.exceptions import FeedUnavailable
from catalog.serving import Document, Logo
from edge.errors import error_json

FEED_CACHE = "public, max-age=300, stale-while-revalidate=3600"
LOGO_CACHE = "public, max-age=86400, immutable"
BULK_CACHE = "public, max-age=3600"
JSON = "application/json"

_CODING = re.compile(r"^\s*([\w*-]+)\s*(?:;\s*q\s*=\s*([0-9.]+))?\s*$")


def accepts_gzip(request: HttpRequest) -> bool:
    """Whether Accept-Encoding admits gzip, honouring q=0 and the * wildcard (RFC 9110 12.5.3)."""
    header = request.META.get("HTTP_ACCEPT_ENCODING", "")
    weights = {}
    for part in header.split(","):
        match = _CODING.match(part)
        if match:
            try:
                weights[match[1].lower()] = float(match[2]) if match[2] else 1.0
            except ValueError:
                continue
    weight = weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0)))
    return weight > 0


def document_response(request: HttpRequest, document: Document, cache_control: str) -> HttpResponse:
    """The stored body (gzip when accepted), or 304 when If-None-Match matches its ETag."""
    if accepts_gzip(request):
        response = HttpResponse(document.gzip_body, content_type=JSON)
        response["Content-Encoding"] = "gzip"
        # The compressed bytes are another representation: another validator.
        response["ETag"] = document.etag[:-1] + '-gzip"'
    else:
        response = HttpResponse(document.body, content_type=JSON)
        response["ETag"] = document.etag
    response["Cache-Control"] = cache_control
    patch_vary_headers(response, ["Accept-Encoding"])
    return _conditional(request, response, same_content=document.etag)


def generated_response(request: HttpRequest, document: dict, cache_control: str) -> HttpResponse:
    """A JSON document built per request (the routes, the OpenAPI document), with an ETag of its bytes and 304 when
    If-None-Match matches it: SPEC 4.1 rule 1 asks for an ETag on every JSON response of the feed."""
    response = JsonResponse(document)
    response["ETag"] = f'"{hashlib.sha256(response.content).hexdigest()[:32]}"'
    response["Cache-Control"] = cache_control
    return _conditional(request, response)


def logo_response(request: HttpRequest, logo: Logo) -> HttpResponse:
    response = HttpResponse(logo.content, content_type=logo.content_type)
    response["ETag"] = logo.etag
    response["Cache-Control"] = LOGO_CACHE
    # Uploaded SVG could carry script; opened directly it must not run as our origin.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return _conditional(request, response)


def _conditional(request: HttpRequest, response: HttpResponse, same_content: str | None = None) -> HttpResponse:
    """The response, or 304 when If-None-Match names its ETag (or same_content, the identity ETag of a gzip body:
    the etag each entry of the list publishes, which a client sends whatever encoding it accepts). Or 412 for a
    failed If-Match (RFC 9110 13.1.1)."""
    # RFC 9110 13.1.4: If-Unmodified-Since is ignored where there is no modification date; Django answers 412.
    request.META.pop("HTTP_IF_UNMODIFIED_SINCE", None)
    etag = response["ETag"]
    if same_content and same_content in request.META.get("HTTP_IF_NONE_MATCH", ""):
        etag = same_content
    # A 304 goes without Content-Length (edge/not_modified.py).
    return get_conditional_response(request, etag=etag, response=response)


def not_found() -> HttpResponse:
    return HttpResponse(status=404)


def method_not_allowed() -> HttpResponse:
    response = HttpResponse("method not allowed", status=405, content_type="text/plain")
    response["Allow"] = "GET, HEAD"
    return response


def rate_limit_exceeded(retry_after: int) -> HttpResponse:
    response = HttpResponse("rate limit exceeded", status=429, content_type="text/plain")
    response["Retry-After"] = str(retry_after)
    return response


def feed_unavailable(error: FeedUnavailable) -> HttpResponse:
    response = error_json(503, error.detail)
    response["Retry-After"] = str(error.retry_after)
    response["Cache-Control"] = "no-store"
    return response
