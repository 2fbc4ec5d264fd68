"""Views of the catalog feed (SPEC 4.1): thin wrappers around catalog.serving."""

import functools

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from catalog import openapi, ratelimits, responses, serving
from catalog.exceptions import FeedUnavailable
from catalog.models import is_slug
from edge.length_required import reads_no_body

_EXPOSED = "ETag, Retry-After, RateLimit, RateLimit-Policy"


def feed_route(policy: str | None):
    """The HTTP contract every feed route shares.

    GET and HEAD only (405 otherwise, whatever body: none is read), the rate limit of `policy`, 503 for
    FeedUnavailable, open CORS on every response including errors and 304,
    and HEAD answered with the GET headers and no body.
    """

    def decorator(view):
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            usage = None
            if request.method not in ("GET", "HEAD"):
                response = responses.method_not_allowed()
            elif policy and (usage := ratelimits.consume(request, policy)) and usage.exceeded:
                response = responses.rate_limit_exceeded(usage.reset)
            else:
                try:
                    response = view(request, *args, **kwargs)
                except FeedUnavailable as error:
                    response = responses.feed_unavailable(error)
            if usage:
                for header, value in usage.headers().items():
                    response[header] = value
            response["Access-Control-Allow-Origin"] = "*"
            response["Access-Control-Expose-Headers"] = _EXPOSED
            if request.method == "HEAD" and response.content:
                response["Content-Length"] = str(len(response.content))
                response.content = b""
            return response

        return csrf_exempt(reads_no_body(wrapper))

    return decorator


@feed_route("list")
def app_list(request: HttpRequest) -> HttpResponse:
    return responses.document_response(request, serving.list_document(), responses.FEED_CACHE)


@feed_route("list")
def app_detail(request: HttpRequest, slug: str) -> HttpResponse:
    document = serving.detail_document(slug) if is_slug(slug) else None
    if document is None:
        return responses.not_found()
    return responses.document_response(request, document, responses.FEED_CACHE)


@feed_route("logo")
def app_logo(request: HttpRequest, slug: str) -> HttpResponse:
    logo = serving.logo(slug) if is_slug(slug) else None
    if logo is None:
        return responses.not_found()
    return responses.logo_response(request, logo)


@feed_route("bulk")
def bulk(request: HttpRequest) -> HttpResponse:
    return responses.document_response(request, serving.bulk_document(), responses.BULK_CACHE)


@feed_route(None)
def openapi_document(request: HttpRequest) -> HttpResponse:
    return responses.generated_response(request, openapi.document(), "public, max-age=3600")


@feed_route(None)
def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    return responses.not_found()
