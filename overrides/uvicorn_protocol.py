"""uvicorn's HTTP/1 protocol (httptools) with what uvicorn 0.54 does not do, for the hooks process.

- A client may shut down its sending side once its request is sent and still
  read the answer (RFC 9112 9.6; `shutdown(SHUT_WR)`, `nc -N`). uvicorn lets
  asyncio close the connection at that moment: the answer was lost, yet a
  webhook whose body had arrived was stored and run, and a sender that
  retried sent it twice. Here the answer goes out, with `Connection: close`
  when its head is not out yet, and the connection closes after it.
- A request's head has until the body's deadline
  (REQUEST_BODY_TIMEOUT_SECONDS) to arrive, counted from the connection's
  start or the request's first byte (408), and gunicorn's limits on its size
  (limit_request_line 414, limit_request_fields and
  limit_request_field_size 431): uvicorn waits for a head for ever and
  httptools holds it whole however long, so one client could hold a socket
  for good or fill the process's memory.
- A header name with an underscore is dropped, as gunicorn drops it: Django's
  environ spells `X_Forwarded_For` and `X-Forwarded-For` alike, so one could
  pass for the other behind a proxy that forwards the first unchecked. A
  repeated Host or Content-Type is refused (400), as gunicorn refuses it.
- The scheme a peer of FORWARDED_ALLOW_IPS names (gunicorn's
  secure_scheme_headers: X-Forwarded-Proto and its kin) is the request's, as
  in the web process; uvicorn's own proxy_headers would also rewrite the
  client's address, which edge/clients.py reads itself.

uvicorn offers no setting for any of them. Its protocol is chosen by class
(Config's `http`), and these live in what is private to it: httptools'
callbacks (on_url, on_header, on_headers_complete), asyncio's
eof_received, send_400_response, and the request cycle's attributes (cycle,
more_body, keep_alive, message_event, response_started, response_complete,
flow); each request's cycle, which the protocol builds inside
on_headers_complete, gets its class swapped for Cycle (`__class__`), since
the protocol names RequestResponseCycle directly. edge/asgi_worker.py
serves this protocol and fills Limits from gunicorn's configuration.
"""

import ipaddress

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

WRITTEN_FOR = {"uvicorn": "0.54.0", "httptools": "0.9.0"}

LATE_HEADERS = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
REFUSED = {
    400: b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
    414: b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
    431: b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
}
# RFC 9110 5.3: a field that cannot be a list; a repeat leaves the request open to two readings (gunicorn's set).
SINGLETONS = frozenset((b"host", b"content-type"))


class Limits:
    """What gunicorn's configuration says of request heads and proxies, read once per worker (Worker.__init__)."""

    header_seconds: float = 60
    answer_seconds: float = 60  # the longest an answer may take: a web service's run, and the body before it
    line_bytes = 4094  # gunicorn's limit_request_line
    fields = 100  # limit_request_fields
    field_bytes = 8190  # limit_request_field_size
    # X-Forwarded-Proto and its kin, by lower-case name, with the value that means https; heeded from these peers.
    secure_headers: dict[bytes, str] = {}
    any_peer = False
    peers: tuple = ()

    @classmethod
    def head_bytes(cls) -> int:
        return cls.line_bytes + cls.fields * (cls.field_bytes + 2) + 4


class _Refused(Exception):
    """Raised from a parser callback once its request is refused: httptools stops reading the rest."""


class Protocol(HttpToolsProtocol):
    _refused = False
    _headers_due = None
    _safety_close = None
    _head_bytes = 0
    _fields = 0
    _forwarded_scheme = None
    _seen: frozenset = frozenset()

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._expect_headers()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._headers_due is not None:
            self._head_bytes += len(data)
        super().data_received(data)  # a callback that refused raised _Refused: uvicorn's 400 is not sent (below)
        if self._headers_due is not None and self._head_bytes > Limits.head_bytes():
            self._refuse(431)  # httptools holds a head whole, however long: it is refused before it is read

    def send_400_response(self, msg: str) -> None:
        if not self._refused:
            super().send_400_response(msg)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._fields, self._forwarded_scheme, self._seen = 0, None, frozenset()
        if self.cycle is None or self.cycle.response_complete:  # a pipelined request's head waits for its turn
            self._expect_headers()

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > Limits.line_bytes:
            self._refuse(414)
            raise _Refused

    def on_header(self, name: bytes, value: bytes) -> None:
        if b"_" in name:  # dropped, as gunicorn drops it: in Django's environ X_Forwarded_For is X-Forwarded-For
            return
        self._fields += 1
        if self._fields > Limits.fields or len(name) + len(value) + 2 > Limits.field_bytes:
            self._refuse(431)
            raise _Refused
        lowered = name.lower()
        if lowered in SINGLETONS:
            if lowered in self._seen:
                self._refuse(400)
                raise _Refused
            self._seen = self._seen | {lowered}
        if lowered in Limits.secure_headers:
            secure = value.decode("latin-1").strip().lower() == Limits.secure_headers[lowered]
            self._forwarded_scheme = "https" if secure else "http"
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._head_bytes = 0
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None
        if self._forwarded_scheme and self._from_proxy():
            self.scope["scheme"] = self._forwarded_scheme
        made = self.cycle
        super().on_headers_complete()
        if self.cycle is not made:  # the cycle made for this request; its task runs on the loop's next turn
            self.cycle.__class__ = Cycle

    def connection_lost(self, exc) -> None:
        for timer in (self._headers_due, self._safety_close):
            if timer is not None:
                timer.cancel()
        super().connection_lost(exc)

    def eof_received(self):
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return None  # idle, or between requests: closed, as uvicorn does
        # The answer still goes out; it says Connection: close if its head is not out yet, and the connection
        # closes after it.
        cycle.keep_alive = False
        if cycle.more_body:  # a body cut short: the application reads a disconnect
            cycle.peer_finished = True
            cycle.message_event.set()
        # Nothing more is read from the client: should the answer never come, the connection still ends.
        self._safety_close = self.loop.call_later(Limits.answer_seconds, self.transport.close)
        return True  # keep the sending side open for the answer

    def _from_proxy(self) -> bool:
        """Whether the peer may say the scheme (gunicorn's forwarded_allow_ips), as the web process heeds it."""
        if Limits.any_peer or not self.client:
            return Limits.any_peer
        try:
            address = ipaddress.ip_address(self.client[0])
        except ValueError:
            return False
        return any(address in network for network in Limits.peers)

    def _expect_headers(self) -> None:
        if self._headers_due is None:
            self._headers_due = self.loop.call_later(Limits.header_seconds, self._refuse, 408)

    def _refuse(self, status: int) -> None:
        """Answer status and close; nothing more is read. An answer under way is finished first, then closed."""
        self._refused = True
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:
            self.transport.write(LATE_HEADERS if status == 408 else REFUSED[status])
            self.transport.close()
        else:  # a pipelined request's head: the answer being sent is never cut
            self.cycle.keep_alive = False
            self.flow.pause_reading()


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
