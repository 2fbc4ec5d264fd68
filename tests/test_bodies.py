"""Bodies behind their deadline and declared length (edge/bodies.py), on real sockets, in-process.

Through real gunicorn processes: test_bodies_on_servers.py.
"""

import asyncio
import socket
import threading
import time

import a2wsgi.wsgi
import pytest
from gunicorn.http.errors import InvalidChunkSize

from edge.bodies import BodyIncomplete, BodyTimedOut, BoundedInput, bound, watchdog


@pytest.fixture
def connection():
    """A connected pair: the server's end, read as gunicorn reads it (recv() until it has what was asked), and the
    client's."""
    server, client = socket.socketpair()
    # A client that never sends the rest is closed after 30 s, so that a broken deadline fails the test
    # instead of hanging it.
    safety = threading.Timer(30, client.close)
    safety.start()
    yield server, client
    safety.cancel()
    server.close()
    client.close()


def bounded(server, *, length, deadline):
    return BoundedInput(server.makefile("rb"), length=length, sock=server, deadline=deadline)


def test_a_body_still_being_read_at_its_deadline_is_cut_off_and_can_still_be_answered(connection):
    server, client = connection
    client.sendall(b'{"n": ')  # and nothing more
    body = bounded(server, length=1000, deadline=time.monotonic() + 0.2)
    with pytest.raises(BodyTimedOut):
        body.read(1000)  # blocked in recv() until the watchdog shuts the read side down
    server.sendall(b"HTTP/1.1 408 Request Timeout\r\n\r\n")
    assert client.recv(100).startswith(b"HTTP/1.1 408 ")
    with pytest.raises(BodyTimedOut):
        body.read(1)  # and it stays refused


def test_a_body_read_after_its_deadline_is_refused_even_if_its_bytes_are_there(connection):
    server, client = connection
    client.sendall(b"{}")
    with pytest.raises(BodyTimedOut):
        bounded(server, length=2, deadline=time.monotonic() - 1).read(2)


def test_a_body_that_arrives_in_time_is_read_whole_and_then_no_longer_watched(connection):
    server, client = connection
    client.sendall(b"x" * 1000 + b"next request")
    stream = server.makefile("rb")
    body = BoundedInput(stream, length=1000, sock=server, deadline=time.monotonic() + 60)
    assert body.read(600) + body.read() == b"x" * 1000
    assert body.read() == b""
    assert not watchdog._watches
    assert stream.read(12) == b"next request"  # the connection is intact for what follows


def test_a_body_cut_short_is_incomplete_and_its_connection_not_reused(connection):
    server, client = connection
    client.sendall(b"x" * 44)
    client.close()
    stream = server.makefile("rb")
    stream.failed = False  # gunicorn's body reader: set, gunicorn closes the connection after the answer
    body = BoundedInput(stream, length=1000, sock=server, deadline=time.monotonic() + 60)
    with pytest.raises(BodyIncomplete):
        body.read()
    assert stream.failed is True
    assert not watchdog._watches


def test_a_line_cut_short_is_incomplete(connection):
    server, client = connection
    client.sendall(b"first line\npart of")
    client.close()
    body = bounded(server, length=100, deadline=time.monotonic() + 60)
    assert body.readline() == b"first line\n"
    assert body.readline() == b"part of"
    with pytest.raises(BodyIncomplete):
        body.readline()


def test_gunicorns_chunk_errors_are_an_incomplete_body():
    class BrokenChunks:
        failed = False

        def read(self, size=-1):
            self.failed = True
            raise InvalidChunkSize(b"zz")

    stream = BrokenChunks()
    with pytest.raises(BodyIncomplete):
        BoundedInput(stream, length=None, sock=None, deadline=time.monotonic() + 60).read(65536)


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")  # the loop took none
def test_a_body_still_being_read_when_the_hooks_process_stops_is_incomplete_not_an_error():
    """a2wsgi reads the body of a request served in a thread through the event loop, which closes as the hooks
    process stops: the body is cut off, not a 500 with a traceback in the log."""
    loop = asyncio.new_event_loop()
    loop.close()

    async def receive():
        return {"type": "http.request", "body": b"never", "more_body": False}

    stream = a2wsgi.wsgi.Body(loop, receive)
    with pytest.raises(BodyIncomplete):
        BoundedInput(stream, length=1000, sock=None, deadline=time.monotonic() + 60).read(1000)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"CONTENT_LENGTH": "12"}, 12),
        ({"HTTP_TRANSFER_ENCODING": "chunked"}, None),
        ({"CONTENT_LENGTH": "0"}, "none"),
        ({}, "none"),
    ],
)
def test_only_requests_with_a_body_are_bounded(headers, expected):
    environ = {"wsgi.input": object(), **headers}
    body = bound(environ)
    if expected == "none":
        assert body is None and not isinstance(environ["wsgi.input"], BoundedInput)
    else:
        assert environ["wsgi.input"] is body and body._left == expected
