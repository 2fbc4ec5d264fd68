"""The one parser of JSON request bodies: UTF-8 (a byte order mark allowed), strict, read within a limit.

Strict as automations/jsonsafe.py parses trigger data: NaN, Infinity, a
number too large for a float and nesting past 200 levels are not JSON, since
no other parser (PostgreSQL's, a browser's) would read them back. Used by
the chat widget's messages, approval decisions (JSONBodyParser), client
registration and a webhook's handshake (parse); MCP messages go through
jsonsafe.loads alike.
"""

from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import BaseParser

from automations import jsonsafe
from edge import bodies


class NotJSON(ValueError):
    """Why a body is not JSON, in words its sender can act on."""


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "the body is too large"


def parse(raw: bytes):
    """The JSON value of a request body; NotJSON when it is not UTF-8 or not strict JSON."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise NotJSON("the body is not JSON in UTF-8") from None
    try:
        return jsonsafe.loads(text)
    except ValueError as error:
        raise NotJSON(f"the body is not JSON: {error}") from None


def read_within(stream, parser_context: dict | None, limit: int) -> bytes | None:
    """The body, or None when it is over limit bytes: declared so in Content-Length, refused before a byte is read
    (a client that sends none would otherwise hold a thread until the body deadline), or sent so, read no further
    than one byte past the limit."""
    request = (parser_context or {}).get("request")
    declared = bodies.declared_length(request.META) if request is not None else 0
    if declared and declared > limit:
        return None
    raw = stream.read(limit + 1) if stream is not None else b""
    return raw if len(raw) <= limit else None


class JSONBodyParser(BaseParser):
    """DRF's parser of JSON bodies of at most max_bytes(): 413 past it, 400 saying why for a body that is not JSON."""

    media_type = "application/json"

    def max_bytes(self) -> int:
        raise NotImplementedError

    def parse(self, stream, media_type=None, parser_context=None):
        raw = read_within(stream, parser_context, self.max_bytes())
        if raw is None:
            raise PayloadTooLarge()
        try:
            return parse(raw)
        except NotJSON as error:
            raise ParseError(str(error)) from None
