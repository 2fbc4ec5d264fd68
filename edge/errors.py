"""Errors of the JSON endpoints in one shape, {"error": "..."}: DRF's views and plain Django views alike.

DRF's own bodies vary ({"detail": ...}, a dict of field lists); the service
answers one shape everywhere (STYLE.md 6). exception_handler is DRF's
EXCEPTION_HANDLER (settings.REST_FRAMEWORK): a view raises, and the error
is answered here; a validation error keeps the first message of the first
field, prefixed by the field's name, and Refused carries fields beside the
message. error_reply is the same body as a Reply (edge/replies.py), for the
rules that answer without an HTTP object (web services, MCP), and error_json
for a plain Django view. OAuth's endpoints keep OAuth's shape
(mcp_auth/views.py), and JSON-RPC and MCP tool results their own protocol's.
"""

import json

from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from edge.replies import Reply, response


class TooManyRequests(exceptions.APIException):
    """429 with Retry-After: wait seconds."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_detail = "rate limit exceeded"

    def __init__(self, wait: int, detail: str | None = None):
        super().__init__(detail)
        self.wait = wait  # DRF's handler sends it as Retry-After


class Refused(exceptions.APIException):
    """An API view's refusal that says more than its message: {"error": message, **fields} (the fields a form
    refused, the item as it now stands)."""

    def __init__(self, status_code: int, message: str, **fields):
        super().__init__(message)
        self.status_code = status_code
        self.fields = fields


def error_reply(status_code: int, message: str, headers: tuple[tuple[str, str], ...] = (), **fields) -> Reply:
    """{"error": message, ...fields} as a Reply; lazy translations, dates and UUIDs encoded as JsonResponse would."""
    body = json.dumps({"error": message, **fields}, cls=DjangoJSONEncoder).encode()
    return Reply(status_code, headers, body, "application/json")


def error_json(status_code: int, message: str, **fields) -> HttpResponse:
    """{"error": message, ...fields} for a plain Django view."""
    return response(error_reply(status_code, message, **fields))


def exception_handler(error, context):
    response = drf_exception_handler(error, context)
    if response is None:
        return None  # not an API error: Django's handling (a 500) applies
    if isinstance(error, exceptions.ValidationError):
        message = _first_message(error.detail)
    else:  # DRF's own detail, also for Django's Http404 and PermissionDenied, which it turns into its own
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        message = str(detail) or "request refused"
    fields = error.fields if isinstance(error, Refused) else {}
    body = Response({"error": message, **fields}, status=response.status_code)
    for name in ("Retry-After", "Allow", "WWW-Authenticate"):
        if name in response:
            body[name] = response[name]
    return body


def _first_message(detail, field: str = "") -> str:
    if isinstance(detail, dict):
        for name, inner in detail.items():
            prefix = "" if name == "non_field_errors" else name
            return _first_message(inner, prefix)
        return "invalid request"
    if isinstance(detail, list):
        return _first_message(detail[0], field) if detail else "invalid request"
    return f"{field}: {detail}" if field else str(detail)
