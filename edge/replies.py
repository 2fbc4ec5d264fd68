"""One reply type for the answers worked out before any HTTP object exists: webhooks, web services, MCP.

The rules that decide an answer (hooks/answers.py, hooks/webservice.py,
mcp_server/transport.py) return a Reply and do no I/O, so they are tested as
plain functions; whoever serves the request turns it into bytes: the hooks
process's event loop (hooks/asgi.py) or a Django view (`response`).
"""

import json
from dataclasses import dataclass

from django.http import HttpResponse


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    content_type: str | None = None  # None: no body, no Content-Type

    def with_headers(self, *headers: tuple[str, str]) -> "Reply":
        return Reply(self.status, self.headers + headers, self.body, self.content_type)


def json_reply(status: int, document, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    """A JSON body; the document is ours or already cleaned (no NaN, no lone surrogate)."""
    return Reply(status, headers, json.dumps(document).encode(), "application/json")


def response(reply: Reply) -> HttpResponse:
    """The reply as Django's response, for a view; Django's middleware adds what every page gets."""
    answer = HttpResponse(reply.body, status=reply.status, content_type=reply.content_type)
    if reply.content_type is None:
        del answer["Content-Type"]
    for name, value in reply.headers:
        answer[name] = value
    return answer
