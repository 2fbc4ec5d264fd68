"""Views of MCP_URL: the MCP endpoint (mcp_auth/transport.py) and its protected-resource metadata documents."""

import json

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from mcp_auth import bearer, resource_metadata, transport

# Browsers may read these answer headers: the challenge a 401/403 carries, which a browser client needs to sign in.
EXPOSED = "WWW-Authenticate"
PREFLIGHT_HEADERS = "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID"


def _metadata(document: dict, request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        response = HttpResponse(status=405)
        response["Allow"] = "GET, HEAD, OPTIONS"
        return response
    response = JsonResponse(document) if request.method != "OPTIONS" else HttpResponse(status=204)
    response["Access-Control-Allow-Origin"] = "*"  # public, and fetched by browser clients before they sign in
    response["Cache-Control"] = "public, max-age=3600"
    return response


@csrf_exempt  # read-only: a POST gets 405, not the CSRF failure page
def protected_resource(request: HttpRequest) -> HttpResponse:
    return _metadata(resource_metadata.root_document(), request)


@csrf_exempt  # read-only: a POST gets 405, not the CSRF failure page
def protected_resource_mcp(request: HttpRequest) -> HttpResponse:
    return _metadata(resource_metadata.endpoint_document(), request)


def _answer(status: int, body: dict | None, origin: str | None, challenge: str | None = None) -> HttpResponse:
    if body is None:
        response = HttpResponse(status=status)
        del response["Content-Type"]
    else:
        response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    if challenge:
        response["WWW-Authenticate"] = challenge
    response["Cache-Control"] = "no-store"
    response["Access-Control-Expose-Headers"] = EXPOSED
    if origin:
        response["Access-Control-Allow-Origin"] = origin
        response["Vary"] = "Origin"
    return response


def _refused(refusal: bearer.Refusal, origin: str | None) -> HttpResponse:
    return _answer(refusal.status, {"error": refusal.error}, origin, refusal.challenge)


@csrf_exempt
def endpoint(request: HttpRequest) -> HttpResponse:
    """POST one JSON-RPC message; see docs/mcp.md for the order of the checks and every answer."""
    origin = request.headers.get("Origin")
    if origin is not None and origin.rstrip("/") not in settings.MCP_ALLOWED_ORIGINS:
        return _answer(403, {"error": "this Origin may not call the MCP server"}, None)  # DNS rebinding
    if request.method == "OPTIONS":  # a browser's CORS preflight carries no credentials
        response = _answer(204, None, origin)
        response["Access-Control-Allow-Methods"] = "POST"
        response["Access-Control-Allow-Headers"] = PREFLIGHT_HEADERS
        response["Access-Control-Max-Age"] = "86400"
        return response
    if any(name.lower() == "access_token" for name in request.GET):
        return _refused(bearer.token_in_query(), origin)
    found = bearer.authenticate(authorization=request.headers.get("Authorization"))
    if isinstance(found, bearer.Refusal):
        return _refused(found, origin)
    if request.method != "POST":  # stateless: no stream to GET, no session to DELETE
        response = _answer(405, {"error": "method not allowed: POST one JSON-RPC message"}, origin)
        response["Allow"] = "POST, OPTIONS"
        return response
    try:
        body = request.body
    except RequestDataTooBig:
        return _answer(413, {"error": "request body too large"}, origin)
    headers = {name.lower(): value for name, value in request.headers.items()}
    reply = transport.handle(body=body, headers=headers, bearer=found)
    if reply.needs_scopes:
        return _refused(bearer.insufficient_scope(reply.needs_scopes, held=found.scopes), origin)
    return _answer(reply.status, reply.body, origin)
