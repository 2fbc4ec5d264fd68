"""The hooks process's worker (config/asgi_worker.py): request targets read as the web process reads them, and a
half-closed connection ended even when its answer never comes.

Half-closed connections that get their answer, and every target through the real hooks process:
hooks/tests/test_hooks_process.py.
"""

import os
import signal
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest

from config.asgi_worker import origin_form
from tests.e2e.stack import wait_until

SCOPE = {"type": "http", "method": "POST", "headers": [], "scheme": "https", "http_version": "1.1"}


@pytest.mark.parametrize(
    ("raw_path", "query", "path", "left_query"),
    [
        (b"http://hooks.example.com/automation-k", b"n=1", "/automation-k", b"n=1"),
        (b"HTTPS://hooks.example.com", b"", "/", b""),
        (b"ftp://hooks.example.com/automation-k", b"", "/automation-k", b""),
        (b"http://[x/automation-k", b"", "http://[x/automation-k", b""),  # no authority to take off: as it came
        (b"/automation-k#top", b"", "/automation-k", b""),
        (b"/automation-k#top", b"n=1", "/automation-k", b""),  # "?n=1" was part of the fragment
        (b"/automation-k", b"n=1#top", "/automation-k", b"n=1"),
        (b"/automation-%C3%A9%23k", b"", "/automation-\u00e9#k", b""),  # an escaped # is the path's own
    ],
)
def test_a_target_in_absolute_form_or_with_a_fragment_is_read_as_its_path(raw_path, query, path, left_query):
    as_gunicorn_reads_it = unquote_to_bytes(raw_path).decode()
    read = origin_form({**SCOPE, "path": as_gunicorn_reads_it, "raw_path": raw_path, "query_string": query})
    assert (read["path"], read["query_string"]) == (path, left_query)


def test_a_target_in_origin_form_is_passed_through_as_it_came():
    scope = {**SCOPE, "path": "/automation-k", "raw_path": b"/automation-k", "query_string": b"a=1"}
    assert origin_form(scope) is scope


SILENT_APP = """
import asyncio


async def app(scope, receive, send):
    if scope["type"] == "http":
        await asyncio.Event().wait()  # an answer that never comes
"""


@contextmanager
def serving(tmp_path, app_source: str, timeout: int = 30):
    """gunicorn with this worker, one process, serving app_source's app; yields (port, the worker's pid)."""
    (tmp_path / "served_app.py").write_text(app_source)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    root = Path(__file__).resolve().parent.parent
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "served_app:app", "-k", "config.asgi_worker.Worker"]
        + ["--bind", f"127.0.0.1:{port}", "--timeout", str(timeout), "--workers", "1"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children")
        # The master listens before its worker is up: wait for both.
        wait_until(lambda: _answers(port) and children.read_text().split(), 30, 0.1, "the server and its worker")
        yield port, int(children.read_text().split()[0])
    finally:
        os.killpg(server.pid, signal.SIGKILL)  # master and worker: a graceful stop would wait on a hung request
        server.wait(30)


def test_a_half_closed_connection_whose_answer_never_comes_is_closed_after_the_timeout(tmp_path):
    with (
        serving(tmp_path, SILENT_APP, timeout=1) as (port, _),
        socket.create_connection(("127.0.0.1", port), timeout=60) as sock,
    ):
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(100) == b""  # closed by the server; left open, recv would time out


QUICK_APP = """
async def app(scope, receive, send):
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
"""


def test_a_client_that_closes_before_reading_its_answer_leaves_no_socket_open(tmp_path):
    with serving(tmp_path, QUICK_APP) as (port, worker):
        baseline = len(os.listdir(f"/proc/{worker}/fd"))
        for _ in range(200):  # each sends a whole request and closes at once: the answer meets a reset connection
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(b"POST /automation-k HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        # Before the fix all 200 stayed open for good (gunicorn skipped close() when write_eof() failed).
        wait_until(lambda: len(os.listdir(f"/proc/{worker}/fd")) < baseline + 10, 15, 0.2, "the sockets closed")


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True
