"""An inbound request as the hooks store it, read without holding more than the size limit in memory."""
from dataclasses import dataclass

from django.conf import settings
from django.core.handlers.wsgi import get_path_info, get_script_name
from django.http import HttpRequest

from hooks.exceptions import BodyIncomplete, BodyTooLarge

CHUNK = 64 * 1024


@dataclass(frozen=True)
class Incoming:
    method: str
    path: str
    query_string: str
    content_type: str
    body: bytes


def read_body(environ: dict) -> bytes:
    """The whole body; BodyTooLarge as soon as it is known to pass the limit, BodyIncomplete if it was cut short.

    A declared Content-Length over the limit is refused before a byte is
    read, and no more than the declared length is read. A chunked body (no
    Content-Length) is read from the server's decoded stream a chunk at a
    time and refused once it passes the limit. A stream that ends before the
    declared length, or fails, is a client gone: its body is never taken for
    a whole one. (Under gunicorn the stream is a hooks.bodies.BoundedInput,
    which also raises BodyTimedOut past the body's deadline.)
    """
    limit = settings.HOOK_MAX_BODY_BYTES
    stream = environ["wsgi.input"]
    declared = environ.get("CONTENT_LENGTH")
    try:
        if declared:
            try:
                length = int(declared)
            except ValueError:
                length = 0
            if length > limit:
                raise BodyTooLarge()
            body = stream.read(length) if length > 0 else b""
            # A stream may return less than asked before its end; only an empty read ends it.
            while len(body) < length and (more := stream.read(length - len(body))):
                body += more
            if len(body) < length:
                raise BodyIncomplete()
            return body
        if "chunked" not in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
            return b""
        parts, size = [], 0
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge()
            parts.append(chunk)
        return b"".join(parts)
    except OSError:  # a connection reset under a server that reports it so
        raise BodyIncomplete() from None


def from_environ(environ: dict) -> Incoming:
    return with_body(environ, read_body(environ))


def with_body(environ: dict, body: bytes) -> Incoming:
    """The request described by environ, with its body read by whoever serves it (WSGI stream or ASGI messages)."""
    return Incoming(
        method=environ["REQUEST_METHOD"],
        path=get_script_name(environ) + get_path_info(environ),
        query_string=environ.get("QUERY_STRING", ""),
        content_type=environ.get("CONTENT_TYPE", ""),
        body=body,
    )


def incoming(request: HttpRequest) -> Incoming:
    return from_environ(request.META)
