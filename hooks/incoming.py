"""An inbound request as the hooks store it, read without holding more than the size limit in memory."""
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest

from hooks.exceptions import BodyTooLarge

CHUNK = 64 * 1024


@dataclass(frozen=True)
class Incoming:
    method: str
    path: str
    query_string: str
    content_type: str
    body: bytes


def read_body(request: HttpRequest) -> bytes:
    """The body, or BodyTooLarge as soon as it is known to pass the limit.

    A declared Content-Length over the limit is refused before a byte is
    read. A chunked body (no Content-Length; Django would read it as empty)
    is read from the server's decoded stream a chunk at a time and refused
    once it passes the limit.
    """
    limit = settings.HOOK_MAX_BODY_BYTES
    declared = request.META.get("CONTENT_LENGTH")
    if declared:
        try:
            length = int(declared)
        except ValueError:
            length = 0
        if length > limit:
            raise BodyTooLarge()
        return request.read() if length > 0 else b""
    if "chunked" not in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
        return b""
    stream = request.environ["wsgi.input"]
    parts, size = [], 0
    while chunk := stream.read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        parts.append(chunk)
    return b"".join(parts)


def incoming(request: HttpRequest) -> Incoming:
    return Incoming(
        method=request.method,
        path=request.path,
        query_string=request.META.get("QUERY_STRING", ""),
        content_type=request.META.get("CONTENT_TYPE", ""),
        body=read_body(request),
    )
