"""The JSON endpoints of the authorization server: metadata, client registration, token and revocation.

Token and revocation are django-oauth-toolkit's views (PKCE, refresh token
rotation with reuse detection, RFC 7009), wrapped for CORS, for parameters
sent in the URL, and to record a client's first token. OAuth errors keep
OAuth's shape, {"error": "<code>", "error_description": "..."}, which
clients parse by its code.
"""

import hashlib
import json
import re

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST, require_safe
from oauth2_provider import views as toolkit

from edge import json_bodies, limits
from edge.clients import client_address
from mcp_auth import connections, metadata, registration
from mcp_auth.cors import open_to_any_origin
from overrides.oauth_token_view import TokenViewWithoutSignal

MAX_REGISTRATION_BYTES = 16384
_VERIFIER = re.compile(r"[A-Za-z0-9._~-]{43,128}")
MAX_JSON_DEPTH = 20


def oauth_error(error: str, description: str, *, status: int = 400) -> JsonResponse:
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    response["Cache-Control"] = "no-store"
    return response


@open_to_any_origin("GET", "HEAD")
@csrf_exempt  # read-only: a POST gets 405, not the CSRF failure page
@require_safe
def authorization_server_metadata(request: HttpRequest) -> HttpResponse:
    response = JsonResponse(metadata.authorization_server_metadata())
    response["Cache-Control"] = "public, max-age=3600"
    return response


class BadDocument(ValueError):
    pass


def _depth(value, level: int = 0) -> int:
    if level > MAX_JSON_DEPTH:
        raise BadDocument("the document is nested too deeply")
    if isinstance(value, dict):
        return max([_depth(item, level + 1) for item in value.values()], default=level)
    if isinstance(value, list):
        return max([_depth(item, level + 1) for item in value], default=level)
    return level


def read_document(request: HttpRequest) -> dict:
    """The registration request's JSON object, read no further than MAX_REGISTRATION_BYTES; BadDocument otherwise."""
    raw = request.read(MAX_REGISTRATION_BYTES + 1)
    if len(raw) > MAX_REGISTRATION_BYTES:
        raise BadDocument(f"the document is larger than {MAX_REGISTRATION_BYTES} bytes")
    try:
        document = json_bodies.parse(raw)
    except json_bodies.NotJSON as error:
        raise BadDocument(str(error)) from None
    if not isinstance(document, dict):
        raise BadDocument("the body must be a JSON object of client metadata (RFC 7591)")
    _depth(document)
    return document


def _first_error(errors) -> tuple[str, str, str]:
    """(field, message, code) of a serializer's first error."""
    field, detail = next(iter(errors.items()))
    while isinstance(detail, (list, dict)):
        detail = next(iter(detail.values())) if isinstance(detail, dict) else detail[0]
    return field, str(detail), getattr(detail, "code", "")


@csrf_exempt
@open_to_any_origin("POST")
@require_POST
def register_client(request: HttpRequest) -> HttpResponse:
    """POST /oauth/client: RFC 7591 dynamic registration, open to anonymous clients."""
    if wait := limits.retry_after(request, "client registration"):
        response = oauth_error("too_many_requests", "too many client registrations; try again later", status=429)
        response["Retry-After"] = str(wait)
        return response
    try:
        document = read_document(request)
    except BadDocument as error:
        status = 413 if "larger than" in str(error) else 400
        return oauth_error("invalid_client_metadata", str(error), status=status)
    serializer = registration.ClientMetadata(data=document)
    if not serializer.is_valid():
        field, message, code = _first_error(serializer.errors)
        error = "invalid_redirect_uri" if code == "invalid_redirect_uri" else "invalid_client_metadata"
        return oauth_error(error, f"{field}: {message}")
    data = serializer.validated_data
    created = registration.register_client(
        name=data["client_name"],
        redirect_uris=data["redirect_uris"],
        auth_method=data["token_endpoint_auth_method"],
        address=client_address(request) or None,
    )
    response = JsonResponse(created.as_response(), status=201)
    response["Cache-Control"] = "no-store"
    return response


def _refused_parameters(request: HttpRequest) -> JsonResponse | None:
    """Parameters in the URL (codes, tokens and secrets land in logs and histories: RFC 6749 3.2, RFC 7009 2.1), with
    NUL, given twice, or a PKCE verifier of the wrong form: invalid_request before anything is looked up."""
    if request.META.get("QUERY_STRING"):
        return oauth_error("invalid_request", "send the parameters in the request body, not in the URL")
    if any("\x00" in value for values in request.POST.lists() for value in values[1]):
        return oauth_error("invalid_request", "parameters must not contain NUL characters")
    # resource may be repeated (RFC 8707 2); its check answers invalid_target for more than one.
    if repeated := next(
        (name for name, values in request.POST.lists() if len(values) > 1 and name != "resource"), None
    ):
        return oauth_error("invalid_request", f"{repeated} is given more than once")  # RFC 6749 3.2
    verifier = request.POST.get("code_verifier")
    if verifier is not None and not _VERIFIER.fullmatch(verifier):
        return oauth_error("invalid_request", "code_verifier must be 43 to 128 of A-Z a-z 0-9 - . _ ~ (RFC 7636 4.1)")
    return None


@method_decorator(open_to_any_origin("POST"), name="dispatch")
class TokenView(TokenViewWithoutSignal):
    """POST /oauth/token: authorization_code (PKCE S256) and refresh_token grants."""

    def post(self, request, *args, **kwargs):
        if refused := _refused_parameters(request):
            return refused
        return _challenged_as_sent(request, super().post(request, *args, **kwargs))

    @method_decorator(sensitive_post_parameters("client_secret", "code", "code_verifier", "refresh_token"))
    def authorization_flow_token_response(self, request, *args, **kwargs):
        """The toolkit's answer (overrides/oauth_token_view.py), in JSON whatever went wrong.

        A client's first token, and the start of its connection to the user,
        are recorded when a code is exchanged; a refresh grant implies one
        was, so refreshes pay for no extra query.
        """
        response = super().authorization_flow_token_response(request, *args, **kwargs)
        if not response["Content-Type"].startswith("application/json"):
            # Errors raised while the tokens are saved (invalid_target) come back without oauthlib's headers.
            response["Content-Type"] = "application/json"
            response["Cache-Control"] = "no-store"
        if response.status_code == 200 and request.POST.get("grant_type") == "authorization_code":
            token = json.loads(response.content).get("access_token", "")
            checksum = hashlib.sha256(token.encode()).hexdigest()
            registration.mark_used(access_token_checksum=checksum)
            connections.record_connection(access_token_checksum=checksum)
        return response


@method_decorator(open_to_any_origin("POST"), name="dispatch")
class RevokeView(toolkit.RevokeTokenView):
    """POST /oauth/revoke: RFC 7009; revoking either token of a pair revokes both."""

    def post(self, request, *args, **kwargs):
        if refused := _refused_parameters(request):
            return refused
        return _challenged_as_sent(request, super().post(request, *args, **kwargs))


def _challenged_as_sent(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """RFC 6749 5.2: a client that failed Basic authentication is challenged with Basic; oauthlib says Bearer."""
    if response.status_code == 401 and request.headers.get("Authorization", "").lower().startswith("basic "):
        response["WWW-Authenticate"] = 'Basic realm="oauth", error="invalid_client"'
    return response
