"""The bodies of the interfaces' JSON endpoints (chat messages, approval decisions), read within a limit."""

from edge import bodies


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
