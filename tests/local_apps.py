"""Local HTTP servers standing in for other apps in tests: loopback only, on a free port."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve handler on 127.0.0.1 in a thread; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        if stopping := getattr(handler, "stopping", None):
            stopping.set()  # a held answer ends now: server_close waits for every request thread
        server.shutdown()
        server.server_close()


def slow_handler(seconds: float) -> type[BaseHTTPRequestHandler]:
    """A handler that reads a POST, waits this long or until its server stops, then answers 200 with {}."""

    class Slow(QuietHandler):
        stopping = threading.Event()

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.stopping.wait(seconds)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    return Slow
