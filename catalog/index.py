"""GET /catalog/v1/: the feed's routes as JSON, so that its root is no dead end."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from catalog import responses
from catalog.views import feed_route

ROUTES = (
    ("/apps", "Every connectable app: summary fields, the envelope {generated_at, count, apps}"),
    ("/apps/{slug}", "One app with its triggers and actions"),
    ("/apps/{slug}/logo", "The app's icon"),
    ("/bulk", "Every app with its triggers and actions, rebuilt daily"),
    ("/openapi.json", "The OpenAPI 3 document of these routes"),
)


@feed_route(None)
def routes(request: HttpRequest) -> HttpResponse:
    base = f"{settings.BASE_URL}/catalog/v1"
    document = {
        "routes": [
            {"path": f"/catalog/v1{path}", "url": f"{base}{path}", "description": description}
            for path, description in ROUTES
        ],
        "openapi": f"{base}/openapi.json",
    }
    return responses.generated_response(request, document, "public, max-age=3600")
