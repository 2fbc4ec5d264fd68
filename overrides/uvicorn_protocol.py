"""uvicorn's HTTP/1 protocol (httptools) with three things uvicorn 0.54 does not do, for the hooks process.

- A client may shut down its sending side once its request is sent and still
  read the answer (RFC 9112 9.6; `shutdown(SHUT_WR)`, `nc -N`). uvicorn lets
  asyncio close the connection at that moment: the answer was lost, yet a
  webhook whose body had arrived was stored and run, and a sender that
  retried sent it twice. Here the answer goes out with `Connection: close`.
- A request's headers have until the body's deadline
  (REQUEST_BODY_TIMEOUT_SECONDS) to arrive, counted from the connection's
  start or the request's first byte; uvicorn waits for them for ever, so a
  client sending a byte a minute held its connection and socket for good.
- A header name with an underscore is dropped, as gunicorn drops it: Django's
  environ spells `X_Forwarded_For` and `X-Forwarded-For` alike, so one could
  pass for the other behind a proxy that forwards the first unchecked.

uvicorn offers no setting for any of them. Its protocol is chosen by class
(Config's `http`), and these live in what is private to it: httptools'
callbacks (on_header, on_headers_complete), asyncio's eof_received, and the
request cycle's attributes (cycle, more_body, keep_alive, message_event,
response_started, response_complete); each request's cycle, which the
protocol builds inside on_headers_complete, gets its class swapped for Cycle
(`__class__`), since the protocol names RequestResponseCycle directly.
edge/asgi_worker.py serves this protocol and sets header_seconds.
"""

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

WRITTEN_FOR = {"uvicorn": "0.54.0", "httptools": "0.9.0"}

LATE_HEADERS = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class Protocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the three rules above; the hooks process's worker sets header_seconds."""

    header_seconds: float = 60
    _headers_due = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._expect_headers()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._expect_headers()

    def on_header(self, name: bytes, value: bytes) -> None:
        if b"_" not in name:
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None
        made = self.cycle
        super().on_headers_complete()
        if self.cycle is not made:  # the cycle made for this request; its task runs on the loop's next turn
            self.cycle.__class__ = Cycle

    def connection_lost(self, exc) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
        super().connection_lost(exc)

    def eof_received(self):
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return None  # idle, or between requests: closed, as uvicorn does
        cycle.peer_finished = True  # a body cut short is read as a disconnect; the answer still goes out
        cycle.keep_alive = False  # it says Connection: close, and the connection closes after it
        cycle.message_event.set()
        # Nothing more is read from the client: should the answer never come, the connection still ends.
        self.loop.call_later(self.header_seconds, self.transport.close)
        return True  # keep the sending side open for the answer

    def _expect_headers(self) -> None:
        if self._headers_due is None:
            self._headers_due = self.loop.call_later(self.header_seconds, self._headers_late)

    def _headers_late(self) -> None:
        self._headers_due = None
        if self.cycle is None or self.cycle.response_complete:  # never in the middle of another answer
            self.transport.write(LATE_HEADERS)
        self.transport.close()


class Cycle(RequestResponseCycle):
    """A request's cycle that closes its connection after an answer given before the body was all read.

    httptools would read what follows as the rest of the body and then, as a
    next request, bytes a client sent after it gave up on the body: so the
    answer says `Connection: close` (a 413 by its declared length, a 408),
    as gunicorn's WSGI worker does.
    """

    peer_finished = False

    async def send(self, message) -> None:
        if self.more_body and not self.response_started:
            self.keep_alive = False
        await super().send(message)

    async def receive(self):
        message = await super().receive()
        if self.peer_finished and message.get("more_body"):
            return {"type": "http.disconnect"}
        return message
