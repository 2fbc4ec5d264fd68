"""An inbound request as the hooks store and run it: method, path, query string, content type and body."""

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest

from edge import bodies


@dataclass(frozen=True)
class Incoming:
    method: str
    path: str
    query_string: str
    content_type: str
    body: bytes


def read_body(environ: dict) -> bytes:
    """A hook request's body under HOOK_MAX_BODY_BYTES, as Django serves it (edge/bodies.py)."""
    return bodies.read(environ, settings.HOOK_MAX_BODY_BYTES)


def with_body(request: HttpRequest, body: bytes) -> Incoming:
    """The request as Django read it (its path decoded once, as the hooks process's), with its body."""
    return Incoming(
        method=request.method,
        path=request.path,
        query_string=request.META.get("QUERY_STRING", ""),
        content_type=request.META.get("CONTENT_TYPE", ""),
        body=body,
    )
