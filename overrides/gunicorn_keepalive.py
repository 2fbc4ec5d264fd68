"""gunicorn's decision to keep a connection alive, reached from the application: its drain limit, its close flags.

gunicorn's threaded worker reuses a connection after an answer unless the
request says close, skipping what is left of an unread body up to
`_DRAIN_MAX_BYTES` (gunicorn.http.parser, private); past that it closes the
connection, though its answer said keep-alive (edge/handler.py makes the
answer say Connection: close instead). A WSGI application has no public way
to ask for either: here the request's `must_close` is set, which
Request.should_close reads before the answer's headers are written, and the
body reader's `failed`, which Parser.finish_body reads to give up on the
connection rather than read what follows a broken body as the next request.
"""

from gunicorn.http.parser import _DRAIN_MAX_BYTES

WRITTEN_FOR = {"gunicorn": "27.0.1"}

# At most this much of a body left unread is skipped before gunicorn reuses the connection.
DRAIN_MAX_BYTES = _DRAIN_MAX_BYTES


def close_after_answer(request) -> None:
    """The gunicorn request's connection closes after its answer, which says Connection: close."""
    request.must_close = True


def give_up_on_body(stream) -> None:
    """The connection of this wsgi.input is not reused: gunicorn's body reader has `failed`; other servers' none."""
    if hasattr(stream, "failed"):
        stream.failed = True
