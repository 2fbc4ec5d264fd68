"""Web service response: the status, headers and body a web service caller gets back."""

import re

from automations.steps import StepFailed

KIND = "respond"
# Its settings leave the service: it renders trigger.path as requested (automations/requested_path.py).
SENDS_OUT = True
# RFC 9110: a header name is a token; a value is visible characters, spaces and tabs, in Latin-1 on the wire.
_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")

SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "integer", "minimum": 200, "maximum": 599},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": {},
    },
}


def run(settings: dict, context) -> dict:
    """The first respond step of a run answers the caller; later ones are recorded but change nothing."""
    headers = settings.get("headers", {})
    for name, value in headers.items():
        _check_header(name, value)
    response = {"status": settings.get("status", 200), "headers": headers, "body": settings.get("body", "")}
    if context.response is None:
        context.response = response
    return response


def _check_header(name: str, value) -> None:
    """A header filled from trigger data may carry a line break (header injection) or what HTTP cannot send."""
    if not _NAME.fullmatch(name) or not isinstance(value, str) or not _VALUE.fullmatch(value):
        raise StepFailed(f"header {name[:100]!r} cannot be sent: its name or value has characters HTTP does not allow")
