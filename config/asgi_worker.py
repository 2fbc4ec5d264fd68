"""gunicorn's asyncio worker (`-k asgi`), answering a client that half-closes its connection after its request,
saying when it closes a connection, and reading every request target as its WSGI worker (the web process) does.

A client may shut down its sending side once its request is sent and still
read the answer (RFC 9112 9.6; `shutdown(SHUT_WR)`, `nc -N`). gunicorn
27.0's ASGI protocol defines no eof_received, so asyncio closed the
connection at that moment: the answer was lost, yet a webhook whose body had
arrived was still stored and run, and a sender that retried sent it twice.
Here the answer goes out, announced with `Connection: close`, and the
connection closes after it; a body cut short by the half-close is the
application's http.disconnect (400 for a webhook). A half-close between
requests closes the connection, as before. Closing a connection always
closes its socket: gunicorn's own close skipped it when the client had
already reset the connection (it closed without reading its answer), and
every such connection kept a socket and its place in the worker's count for
good, until the process ran out of file descriptors.

An answer given before the request's body has all arrived (a 413 by its
declared length, a 408) says `Connection: close`: gunicorn closes such a
connection after the answer, since it cannot tell where the next request
would start, yet announced it kept alive, and a client that sent its next
request on it lost that request.

gunicorn 27.0's ASGI parser passes a target in absolute form (RFC 9112
3.2.2: `POST http://host/path`) and a fragment through as the path, where
its WSGI parser takes the path alone; the application here gets the path.
"""

from urllib.parse import unquote_to_bytes

from gunicorn.asgi import protocol
from gunicorn.util import split_request_uri
from gunicorn.workers import gasgi


class Protocol(protocol.ASGIProtocol):
    _peer_finished = False

    def eof_received(self):
        in_progress = self._request_ready is not None and (self._request_ready.is_set() or not self._awaiting_request)
        # Idle, HTTP/2, a WebSocket or TLS (whose transport closes whatever this returns): as gunicorn does.
        if not in_progress or self._websocket or self.reader or self._is_ssl:
            return super().eof_received()
        self._peer_finished = True
        self._keepalive = 0  # also when the answer's headers went out before the half-close
        for receiver in [self._body_receiver, *self._finishing_calls.values()]:
            if receiver is not None and not receiver._complete:
                receiver.signal_disconnect()
        # Nothing more is read from the client: should the answer never come, the connection still ends.
        self.worker.loop.call_later(self.cfg.timeout or 30, self._close_transport)
        return True  # keep the sending side open for the answer

    def _will_close(self, request, response_requires_close):
        receiver = self._body_receiver
        unframed = receiver is not None and not receiver._complete  # gunicorn will close: say so in the answer
        return self._peer_finished or unframed or super()._will_close(request, response_requires_close)

    def _close_transport(self):
        # gunicorn's own skips close() when write_eof() raises, as it does once the peer has reset the connection
        # (a client that closed without reading its answer): every such connection kept its socket open for good.
        if self.transport and not self._closed:
            try:
                if self.transport.can_write_eof():
                    self.transport.write_eof()
            except OSError:
                pass
            self.transport.close()
            self._closed = True

    def _build_http_scope(self, request, sockname, peername):
        return origin_form(super()._build_http_scope(request, sockname, peername))


def origin_form(scope: dict) -> dict:
    """The scope with its target's path alone, read by split_request_uri, as gunicorn's WSGI worker reads it."""
    raw, query = scope.get("raw_path") or b"", scope.get("query_string", b"")
    if b"#" not in raw + query and (raw.startswith(b"/") or b"://" not in raw):
        return scope
    try:
        target = split_request_uri((raw + b"?" + query if query else raw).decode("latin-1"))
    except ValueError:  # a malformed authority, which the web process refuses (400): left as it came
        return scope
    raw = (target.path or "/").encode("latin-1")
    path = unquote_to_bytes(raw).decode("utf-8", "replace")
    return {**scope, "path": path, "raw_path": raw, "query_string": target.query.encode("latin-1")}


class Worker(gasgi.ASGIWorker):
    async def _serve(self):
        # The fast parser's availability is read from the base class: look it up there, as the base would.
        protocol.ASGIProtocol._check_h1c_protocol_available()
        gasgi.ASGIProtocol = Protocol  # the protocol _serve() makes for each connection
        await super()._serve()
