"""Request bodies, whole, within their deadline and under a limit, or an error: BodyError's kinds.

Every body has until REQUEST_BODY_TIMEOUT_SECONDS after its request reached
the application (408 past it), and a body cut short is never taken for a
whole one (400): the client left, or its chunked framing is broken.

In a WSGI process every request Django serves (edge/handler.py) has its
body put behind a BoundedInput. gunicorn hands over a short body when the
client leaves early (its reader stops at the end of the stream, whatever
Content-Length said), and raises its own parse errors on broken chunked
framing; both become BodyIncomplete. gunicorn's threaded worker reads a
body with blocking recv() calls inside the application's read, with no
time limit: twenty clients sending a byte every two seconds held all
sixteen threads of a web process, and /healthz went unanswered. A timeout
per recv() would not help (every byte restarts it, and gunicorn's reader
loops over recv() itself). So one watchdog thread per process shuts down
the read side of a socket whose body is still being read past its deadline:
the blocked recv() returns at once and the read raises BodyTimedOut.

In the hooks process (hooks/asgi.py) every request's ASGI receive is
bounded(), and a webhook's body is read from it by read_messages().
"""

import asyncio
import socket
import threading
import time

from django.conf import settings
from django.core.exceptions import BadRequest
from gunicorn.http.errors import ParseException

from overrides import gunicorn_keepalive

# The watchdog sleeps at most this long when it watches nothing; a deadline earlier than its wake-up wakes it.
_IDLE_SECONDS = 10.0
CHUNK = 64 * 1024


# Body errors derive from Django's BadRequest so that one raised from a request's input stream inside Django's
# own handling (a form, the admin, OAuth) is a 400, as Django answers any bad request, rather than a 500.
class BodyError(BadRequest):
    """The request body cannot be used; nothing is stored and nothing runs."""

    status_code = 400
    detail = "request body unusable"  # a web service's answer (docs/webhooks.md); webhooks answer with no body

    def __init__(self, *args):
        super().__init__(*(args or (self.detail,)))


class BodyTooLarge(BodyError):
    """The body is over HOOK_MAX_BODY_BYTES (413)."""

    status_code = 413
    detail = "request body too large"


class BodyIncomplete(BodyError):
    """The body ended before its declared length, or its chunked framing is broken: the client is gone or wrong."""

    status_code = 400
    detail = "request body incomplete"


class BodyTimedOut(BodyError):
    """The body did not arrive within REQUEST_BODY_TIMEOUT_SECONDS of the request's start (408)."""

    status_code = 408
    detail = "request body too slow"


def declared(content_length: str | None, transfer_encoding: str | None) -> int | None:
    """The body's declared length: None for a chunked body, 0 for none (or a Content-Length that is no number)."""
    if transfer_encoding and "chunked" in transfer_encoding.lower():
        return None
    return int(content_length) if content_length and content_length.isdigit() else 0


def declared_length(environ: dict) -> int | None:
    return declared(environ.get("CONTENT_LENGTH"), environ.get("HTTP_TRANSFER_ENCODING"))


def read(environ: dict, limit: int) -> bytes:
    """The whole body of a request served by edge/handler.py; BodyTooLarge as soon as it is known to pass limit.

    A declared length over the limit is refused before a byte is read; a
    chunked body is read a chunk at a time and refused once it passes the limit.
    """
    length = declared_length(environ)
    if length is not None and length > limit:
        raise BodyTooLarge()
    if length is not None:
        return environ["wsgi.input"].read(length) if length else b""
    parts, size = [], 0
    while chunk := environ["wsgi.input"].read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        parts.append(chunk)
    return b"".join(parts)


async def read_messages(receive, declared: int | None, limit: int) -> bytes:
    """The body from receive (bounded()), or BodyTooLarge as soon as it is known to pass the limit.

    A declared length over the limit is refused before a message is read; a
    chunked body (declared None) once what arrived passes the limit. Fewer
    bytes than declared is BodyIncomplete.
    """
    if declared is not None and declared > limit:
        raise BodyTooLarge()
    parts, size, more = [], 0, True
    while more:
        message = await receive()
        parts.append(chunk := message.get("body", b""))
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        more = message.get("more_body", False)
    if declared is not None and size != declared:
        raise BodyIncomplete()
    return b"".join(parts)


def bounded(receive, deadline: float):
    """receive with each body message by deadline (the loop's clock) or BodyTimedOut, a client gone BodyIncomplete.

    The hooks process's Django gets it too: a2wsgi awaits receive from the
    WSGI thread that reads wsgi.input and raises there what it raised, so a
    web service's view answers 408 or 400, and Django answers a page's
    request 400. Once the body is complete, receive is passed through.
    """
    complete = False

    async def bounded_receive():
        nonlocal complete
        if complete:
            return await receive()
        try:
            async with asyncio.timeout_at(deadline):
                message = await receive()
        except TimeoutError:
            raise BodyTimedOut() from None
        if message["type"] == "http.disconnect":
            raise BodyIncomplete()
        complete = not message.get("more_body", False)
        # A server's receive can swallow the timeout's cancellation when a chunk arrives in the same instant
        # (asyncio.wait_for does, in Python 3.11): the next receive would then wait with no deadline at all.
        if not complete and asyncio.get_running_loop().time() >= deadline:
            raise BodyTimedOut()
        return message

    return bounded_receive


def bound(environ: dict) -> "BoundedInput | None":
    """Put the request's body behind a BoundedInput (in environ["wsgi.input"]); None when it has no body."""
    length = declared_length(environ)
    if length == 0:
        return None
    bounded = BoundedInput(
        environ["wsgi.input"],
        length=length,
        sock=environ.get("gunicorn.socket"),
        deadline=time.monotonic() + settings.REQUEST_BODY_TIMEOUT_SECONDS,
    )
    environ["wsgi.input"] = bounded
    return bounded


class BoundedInput:
    """A wsgi.input that gives the whole body or raises: BodyIncomplete if it was cut short, BodyTimedOut if late.

    length is the declared Content-Length, or None for a chunked body (the
    server's stream decodes it and ends it). sock is the connection whose
    read side the watchdog shuts down at the deadline; without one (a test
    client, another server) there is no deadline.
    """

    def __init__(self, stream, *, length: int | None, sock: socket.socket | None, deadline: float):
        self._stream = stream
        self._left = length
        self._sock = sock
        self._deadline = deadline
        self._watching = sock is not None  # until the body is whole, or the request over
        self._watch: _Watch | None = None
        self._error: BodyError | None = None
        self._whole = False

    def leaves_at_least(self, size: int) -> bool:
        """Whether size bytes or more of the body are still to come, or an unknown amount (cut short, chunked)."""
        if self._error is not None or self._whole:
            return self._error is not None
        return self._left is None or self._left >= size

    def read(self, size: int | None = -1) -> bytes:
        if self._left is None:
            data = self._call(self._stream.read, -1 if size is None else size)
            if not data and size != 0:
                self._whole = True
                self._finish()
            return data
        wanted = self._left if size is None or size < 0 else min(size, self._left)
        parts, got = [], 0
        while got < wanted:
            data = self._call(self._stream.read, wanted - got)
            if not data:
                raise self._abandon(BodyIncomplete())
            parts.append(data)
            got += len(data)
        self._consumed(got)
        return b"".join(parts)

    def readline(self, size: int | None = -1) -> bytes:
        if self._left is None:
            line = self._call(self._stream.readline, -1 if size is None else size)
            if not line and size != 0:
                self._whole = True
                self._finish()
            return line
        limit = self._left if size is None or size < 0 else min(size, self._left)
        if limit == 0:
            return b""
        line = self._call(self._stream.readline, limit)
        if not line:
            raise self._abandon(BodyIncomplete())
        self._consumed(len(line))
        return line

    def close(self) -> None:
        """The request is over: whatever is left of the body is no longer watched."""
        self._finish()

    def _call(self, method, size: int) -> bytes:
        if self._error is not None:
            raise self._error
        watch = self._watch
        if watch is None and self._watching:
            watch = self._watch = _Watch(self._sock, self._deadline)
            watchdog.add(watch)
        if watch is not None and not watch.begin():
            raise self._abandon(BodyTimedOut())
        try:
            data = method(size)
        except (OSError, ParseException):  # a reset connection, gunicorn's NoMoreData, a broken chunk
            data = None
        except RuntimeError:  # the hooks process stopping: a2wsgi cannot read through its closed event loop
            data = None
        if watch is not None and watch.end():
            raise self._abandon(BodyTimedOut())
        if data is None:
            raise self._abandon(BodyIncomplete())
        return data

    def _consumed(self, count: int) -> None:
        self._left -= count
        if self._left == 0:
            self._whole = True
            self._finish()

    def _abandon(self, error: BodyError) -> BodyError:
        """Give up on the body: every later read raises the same error, and the connection is not reused."""
        self._error = error
        self._finish()
        # gunicorn closes a connection whose body reader failed rather than read what is left as the next request.
        gunicorn_keepalive.give_up_on_body(self._stream)
        return error

    def _finish(self) -> None:
        self._watching = False
        if self._watch is not None:
            watchdog.discard(self._watch)
            self._watch = None


class _Watch:
    """One body being read: its socket, its deadline, and whether a read of it is under way."""

    __slots__ = ("sock", "deadline", "lock", "reading", "expired")

    def __init__(self, sock: socket.socket, deadline: float):
        self.sock = sock
        self.deadline = deadline
        self.lock = threading.Lock()
        self.reading = False
        self.expired = False

    def begin(self) -> bool:
        """A read starts; False if the deadline has already passed (whether or not the watchdog has seen it)."""
        with self.lock:
            if self.expired or time.monotonic() >= self.deadline:
                self.expired = True
                return False
            self.reading = True
            return True

    def end(self) -> bool:
        """A read ended; True if the deadline passed meanwhile (its socket may have been shut down)."""
        with self.lock:
            self.reading = False
            return self.expired

    def expire(self) -> None:
        # Under the lock, so that a socket is shut down only while its own body is being read, never
        # after the read returned (the connection may by then carry the next request).
        with self.lock:
            self.expired = True
            if self.reading:
                try:
                    # socket.socket's own shutdown, not SSLSocket's, which would drop the TLS state under the reader.
                    socket.socket.shutdown(self.sock, socket.SHUT_RD)
                except OSError:
                    pass


class _Watchdog:
    """One thread per process that expires watches at their deadlines."""

    def __init__(self):
        self._condition = threading.Condition()
        self._watches: set[_Watch] = set()
        self._wake_at = float("inf")
        self._thread: threading.Thread | None = None

    def add(self, watch: _Watch) -> None:
        with self._condition:
            self._watches.add(watch)
            # A forked process (gunicorn's workers) has no copy of its parent's thread: start one of its own.
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="body-deadlines", daemon=True)
                self._thread.start()
            elif watch.deadline < self._wake_at:
                self._condition.notify()

    def discard(self, watch: _Watch) -> None:
        with self._condition:
            self._watches.discard(watch)

    def _run(self) -> None:
        with self._condition:
            while True:
                now = time.monotonic()
                for watch in [watch for watch in self._watches if watch.deadline <= now]:
                    self._watches.discard(watch)
                    watch.expire()
                # Waking only at the earliest deadline (or idle every few seconds) keeps a body that
                # arrives in time from costing a wake-up of this thread.
                self._wake_at = min((watch.deadline for watch in self._watches), default=now + _IDLE_SECONDS)
                self._condition.wait(self._wake_at - now)


watchdog = _Watchdog()
