"""Views of MCP_URL: the MCP endpoint (mcp_server/transport.py) and its protected-resource metadata documents."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from edge.errors import error_reply
from edge.replies import Reply, response
from mcp_server import bearer, protocol, resource_metadata, transport

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


def _answer(reply: Reply, origin: str | None) -> HttpResponse:
    headers = (("Cache-Control", "no-store"), ("Access-Control-Expose-Headers", EXPOSED))
    if origin:
        headers += (("Access-Control-Allow-Origin", origin), ("Vary", "Origin"))
    return response(reply.with_headers(*headers))


def _error(status: int, message: str, origin: str | None, *headers: tuple[str, str]) -> HttpResponse:
    return _answer(error_reply(status, message, headers), origin)


def _refused(refusal: bearer.Refusal, origin: str | None) -> HttpResponse:
    challenge = (("WWW-Authenticate", refusal.challenge),) if refusal.challenge else ()
    return _error(refusal.status, refusal.error, origin, *challenge)


@csrf_exempt
def endpoint(request: HttpRequest) -> HttpResponse:
    """POST one JSON-RPC message; see docs/mcp.md for the order of the checks and every answer."""
    origin = request.headers.get("Origin")
    if origin is not None and origin.rstrip("/") not in settings.MCP_ALLOWED_ORIGINS:
        return _error(403, "this Origin may not call the MCP server", None)  # DNS rebinding
    if request.method == "OPTIONS":  # a browser's CORS preflight carries no credentials
        preflight = (("Access-Control-Allow-Methods", "POST"), ("Access-Control-Allow-Headers", PREFLIGHT_HEADERS))
        return _answer(Reply(204, (*preflight, ("Access-Control-Max-Age", "86400"))), origin)
    if any(name.lower() == "access_token" for name in request.GET):  # revoked already (mcp_server/exposed_tokens.py)
        return _refused(bearer.token_in_query(), origin)
    found = bearer.authenticate(authorization=request.headers.get("Authorization"))
    if isinstance(found, bearer.Refusal):
        return _refused(found, origin)
    if request.method != "POST":  # stateless: no stream to GET, no session to DELETE
        return _error(405, "method not allowed: POST one JSON-RPC message", origin, ("Allow", "POST, OPTIONS"))
    try:
        body = request.body
    except RequestDataTooBig:
        return _error(413, "request body too large", origin)
    headers = {name.lower(): value for name, value in request.headers.items()}
    try:
        reply = transport.handle(body=body, headers=headers, bearer=found)
    except protocol.NeedsScopes as needs:
        return _refused(bearer.insufficient_scope(needs.scopes, held=found.scopes), origin)
    return _answer(reply, origin)
