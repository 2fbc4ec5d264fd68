"""CORS for the endpoints browser-based MCP clients call: any origin, never with credentials, OPTIONS answered.

The metadata documents and the registration, token and revocation endpoints
authenticate nothing by cookie, so `Access-Control-Allow-Origin: *` (which
browsers never combine with cookies) lets a web client such as the MCP
Inspector call them without opening anything a signed-in session holds.
"""

from functools import wraps

from django.http import HttpRequest, HttpResponse

ALLOWED_HEADERS = "Authorization, Content-Type, MCP-Protocol-Version"
PREFLIGHT_MAX_AGE = "86400"


def open_to_any_origin(*methods: str):
    """Decorate a view answering `methods`: every answer gets `Access-Control-Allow-Origin: *`, OPTIONS a preflight."""
    allowed = ", ".join((*methods, "OPTIONS"))

    def decorator(view):
        @wraps(view)
        def cors_view(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method == "OPTIONS":
                response = HttpResponse(status=204)
                response["Allow"] = allowed
                response["Access-Control-Allow-Methods"] = allowed
                response["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
                response["Access-Control-Max-Age"] = PREFLIGHT_MAX_AGE
            else:
                response = view(request, *args, **kwargs)
            response["Access-Control-Allow-Origin"] = "*"
            return response

        return cors_view

    return decorator
