"""The one exception handler of the JSON endpoints (djangorestframework): every error as {"error": "..."}.

DRF's own bodies vary ({"detail": ...}, a dict of field lists); the service
answers one shape everywhere (STYLE.md 6). A validation error keeps the
first message of the first field, prefixed by the field's name.
"""

from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(error, context):
    response = drf_exception_handler(error, context)
    if response is None:
        return None  # not an API error: Django's handling (a 500) applies
    if isinstance(error, exceptions.ValidationError):
        message = _first_message(error.detail)
    else:
        message = str(getattr(error, "detail", "")) or "request refused"
    body = Response({"error": message}, status=response.status_code)
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
