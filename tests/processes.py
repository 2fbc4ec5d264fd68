"""Test clients that send their requests where production does: the web process's Django, or the hooks process.

The fixtures web_client, hooks_client and through (conftest.py) hand out these clients.

Django's own test client skips the handler the web process serves
(edge/handler.py: bodies bounded and checked, charsets) and never reaches
the hooks process's driver (hooks/asgi.py). These hand the test client's
request to config.wsgi.application and to config.asgi.application, in-process.
"""

import asyncio
import contextlib
import threading
from concurrent.futures import wait

from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections
from django.http import HttpResponse

from edge import process_cache
from overrides.wsgi_request import Request


@contextlib.contextmanager
def transaction_of_the_test_kept():
    """As Django's test client does around a request: closing "old" connections would close the test's transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _response(environ, status: int, headers, body: bytes) -> HttpResponse:
    response = HttpResponse(body, status=status)
    del response["Content-Type"]
    for name, value in headers:
        response[name] = value
    response.wsgi_request = Request(environ)
    return response


class WebProcess:
    """Hands a test client's request to config.wsgi.application, as gunicorn's threaded worker does."""

    def __call__(self, environ):
        from config.wsgi import application

        started = []
        with transaction_of_the_test_kept():
            # A copy: Django's request replaces the environ's PATH_INFO with its decoded path.
            start = lambda status, headers, exc_info=None: started.append((status, headers))  # noqa: E731
            chunks = application(dict(environ), start)
            try:
                body = b"".join(chunks)
            finally:
                chunks.close()
        status, headers = started[0]
        return _response(environ, int(status.split()[0]), headers, body)


class HooksProcess:
    """Hands a test client's request to config.asgi.application on an event loop, as the hooks process's worker does.

    The body comes from wsgi.input a piece per message; a stream that ends
    before its declared length, or fails, is a client gone (http.disconnect).
    """

    def __call__(self, environ):
        from config.asgi import application

        sent = []

        async def send(message):
            sent.append(message)

        asyncio.run(application(_scope(environ), _receive(environ), send))
        start = sent[0]
        headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in start["headers"]]
        return _response(environ, start["status"], headers, b"".join(m.get("body", b"") for m in sent[1:]))


@process_cache.on_reset  # around every test (conftest.py): the threads' connections must not outlive the test database
def close_hooks_process_connections() -> None:
    """Close the database connections of the hooks process's threads: its lookups', and a2wsgi's for Django."""
    import sys

    if "config.asgi" not in sys.modules:
        return
    application = sys.modules["config.asgi"].application
    for executor in (application.executor, getattr(application.fallback, "executor", None)):
        threads = len(getattr(executor, "_threads", ()))  # those started so far (a test may stand in for fallback)
        if threads:
            meet = threading.Barrier(threads)  # one call per thread: each waits until every thread holds one
            wait([executor.submit(_close_connections, meet) for _ in range(threads)], timeout=10)


def _close_connections(meet: threading.Barrier) -> None:
    try:
        meet.wait(5)
    finally:
        connections.close_all()


def _scope(environ: dict) -> dict:
    headers = [(b"host", environ.get("HTTP_HOST", environ["SERVER_NAME"]).encode("latin-1"))]
    for name, value in environ.items():
        if name.startswith("HTTP_") and name != "HTTP_HOST" or name in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            header = name.removeprefix("HTTP_").replace("_", "-").lower()
            headers.append((header.encode(), str(value).encode("latin-1")))
    return {
        "type": "http",
        "http_version": "1.1",
        "method": environ["REQUEST_METHOD"],
        "root_path": "",
        "path": environ["PATH_INFO"].encode("latin-1").decode("utf-8", "replace"),
        "headers": headers,
        "query_string": environ.get("QUERY_STRING", "").encode("latin-1"),
        "scheme": environ["wsgi.url_scheme"],
        "server": (environ["SERVER_NAME"], int(environ["SERVER_PORT"])),
        "client": (environ.get("REMOTE_ADDR", "127.0.0.1"), 5555),
    }


def _receive(environ: dict):
    stream = environ["wsgi.input"]
    declared = environ.get("CONTENT_LENGTH", "")
    left = int(declared) if declared.isdigit() else None
    chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "")
    finished = False

    async def receive():
        nonlocal left, finished
        if finished or (left is None and not chunked):
            finished = True
            return {"type": "http.request", "body": b"", "more_body": False}
        try:
            chunk = stream.read(min(left, 65536) if left is not None else 65536)
        except OSError:
            return {"type": "http.disconnect"}
        if left is not None:
            left -= len(chunk)
            if not chunk and left:
                return {"type": "http.disconnect"}  # the client left before its declared length
        finished = not chunk or left == 0
        return {"type": "http.request", "body": chunk, "more_body": not finished}

    return receive
