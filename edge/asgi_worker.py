"""The hooks process's server: uvicorn's worker (uvloop, httptools) under gunicorn's master.

Chosen by measurement against gunicorn's own asyncio worker and granian
(benchmarks/hooks_servers.py, benchmarks/RESULTS.md); gunicorn's master keeps
what every other process has from config/gunicorn.py: a socket per process,
the redacting logger, the refusal of a port already in use.

Three things uvicorn 0.54 does not do, added to its HTTP/1 protocol:
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
"""

import ipaddress
import logging
import os
import signal

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn_worker import UvicornWorker

from config.env import env_int, request_body_timeout

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


class Worker(UvicornWorker):
    # proxy_headers off: the client's address is read by edge/clients.py from what the socket says, as in the web
    # process; uvicorn would rewrite it from X-Forwarded-For. The scheme is taken from FORWARDED_ALLOW_IPS's peers
    # as gunicorn takes it (Protocol.on_header).
    # ws off: the hooks host serves no WebSocket, and an upgrade would bypass this protocol's checks.
    CONFIG_KWARGS = {"loop": "uvloop", "http": Protocol, "ws": "none", "proxy_headers": False, "server_header": False}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        Limits.header_seconds = request_body_timeout()
        Limits.answer_seconds = request_body_timeout() + env_int("WEB_SERVICE_TIMEOUT_SECONDS", 30, minimum=1) + 5
        Limits.line_bytes = self.cfg.limit_request_line or Limits.line_bytes  # 0 means unlimited to gunicorn: not here
        Limits.fields = self.cfg.limit_request_fields or Limits.fields
        Limits.field_bytes = self.cfg.limit_request_field_size or Limits.field_bytes
        Limits.secure_headers = {
            name.lower().encode(): value.lower() for name, value in self.cfg.secure_scheme_headers.items()
        }
        Limits.any_peer = "*" in self.cfg.forwarded_allow_ips
        Limits.peers = tuple(self.cfg.forwarded_allow_networks())
        # uvicorn's access lines go to gunicorn's access handlers (which redact URL keys), with the time first as
        # gunicorn's own lines have it; nothing else in this process writes to those handlers.
        for handler in logging.getLogger("uvicorn.access").handlers:
            handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "[%d/%b/%Y:%H:%M:%S %z]"))

    async def callback_notify(self) -> None:
        # uvicorn's loop calls this every timeout / 2 seconds. gunicorn's own workers stop once their master is
        # gone (killed, say): one left serving on its own socket would keep a new master from starting.
        if os.getppid() != self.ppid:
            self.log.info("Parent changed, shutting down: %s", self)
            os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's own graceful stop, with the lifespan's shutdown
            return
        await super().callback_notify()

    async def _serve(self) -> None:
        # The event loop closes a listening socket as its server closes; handed gunicorn's wrapper, whose close()
        # uvicorn then calls, every stop logged "Error while closing socket [Errno 9] Bad file descriptor".
        self.sockets = [getattr(listener, "sock", listener) for listener in self.sockets]
        await super()._serve()
