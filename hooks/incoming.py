"""An inbound request as the hooks store and run it: method, path, query string, content type and body."""

from dataclasses import dataclass

from django.conf import settings
from django.core.handlers.wsgi import get_path_info, get_script_name

from hooks import bodies


@dataclass(frozen=True)
class Incoming:
    method: str
    path: str
    query_string: str
    content_type: str
    body: bytes


def read_body(environ: dict) -> bytes:
    """A hook request's body under HOOK_MAX_BODY_BYTES, as Django serves it (hooks/bodies.py)."""
    return bodies.read(environ, settings.HOOK_MAX_BODY_BYTES)


def with_body(environ: dict, body: bytes) -> Incoming:
    """The request described by a WSGI environ, with its body."""
    return Incoming(
        method=environ["REQUEST_METHOD"],
        path=get_script_name(environ) + get_path_info(environ),
        query_string=environ.get("QUERY_STRING", ""),
        content_type=environ.get("CONTENT_TYPE", ""),
        body=body,
    )
