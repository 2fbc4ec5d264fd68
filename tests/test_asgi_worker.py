"""The hooks process's server (edge/asgi_worker.py): uvicorn's worker with what it lacks, on a real socket.

The protocol's additions live in overrides/uvicorn_protocol.py; the versions they were written for are guarded in
tests/test_overrides.py.

Webhooks through the real hooks process (half-closed connections that get
their answer, targets in absolute form, bodies cut short or late):
hooks/tests/test_hooks_process.py and hooks/tests/test_bodies_on_servers.py.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.stack import die_with_the_test_run, wait_until

ECHO_APP = """
async def app(scope, receive, send):
    if scope["type"] == "http":
        seen = b" ".join(name for name, _ in scope["headers"]) + b"|" + scope["raw_path"] + b"|" + scope["query_string"]
        seen = scope["scheme"].encode() + b"|" + seen
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(seen))]})
        await send({"type": "http.response.body", "body": seen})
"""
SILENT_APP = """
import asyncio


async def app(scope, receive, send):
    if scope["type"] == "http":
        await asyncio.Event().wait()  # an answer that never comes
"""
QUICK_APP = """
async def app(scope, receive, send):
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
"""


@contextmanager
def serving(tmp_path, app_source: str, *options: str):
    """gunicorn with the hooks process's worker, one process, serving app_source's app; yields (port, its pid)."""
    (tmp_path / "served_app.py").write_text(app_source)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    root = Path(__file__).resolve().parent.parent
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "served_app:app", "-k", "edge.asgi_worker.Worker"]
        + ["--bind", f"127.0.0.1:{port}", "--workers", "1", *options],
        cwd=tmp_path,
        env={
            **os.environ,
            "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}",
            "REQUEST_BODY_TIMEOUT_SECONDS": "2",
            "WEB_SERVICE_TIMEOUT_SECONDS": "1",
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=die_with_the_test_run,
    )
    try:
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children")
        # The master listens before its worker is up: wait for both.
        wait_until(lambda: _answers(port) and children.read_text().split(), 30, 0.1, "the server and its worker")
        yield port, int(children.read_text().split()[0])
    finally:
        os.killpg(server.pid, signal.SIGKILL)  # master and worker: a graceful stop would wait on a hung request
        server.wait(30)


def exchange(port: int, data: bytes) -> bytes:
    """Send data and read until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def test_a_header_spelled_with_an_underscore_is_dropped(tmp_path):
    request = b"GET / HTTP/1.1\r\nHost: x\r\nX_Forwarded_For: 10.0.0.1\r\nX-Real: 1\r\nConnection: close\r\n\r\n"
    with serving(tmp_path, ECHO_APP) as (port, _):
        answer = exchange(port, request)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"|host x-real connection|/|")


@pytest.mark.parametrize(
    ("target", "seen"),
    [
        (b"http://hooks.example.com/automation-k?n=1", b"/automation-k|n=1"),
        (b"/automation-k#top", b"/automation-k|"),
        (b"/automation-k?n=1#top", b"/automation-k|n=1"),
    ],
)
def test_a_target_in_absolute_form_or_with_a_fragment_is_read_as_its_path(tmp_path, target, seen):
    with serving(tmp_path, ECHO_APP) as (port, _):
        answer = exchange(port, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.endswith(b"|" + seen)


def trickled_head(sock: socket.socket) -> bytes:
    """A request head sent a byte every 0.1 s for 10 s, never finished; what the server answered once it closed."""
    sock.sendall(b"GET / HTTP/1.1\r\n")
    try:
        for _ in range(100):  # each byte is progress, none finishes the head
            sock.sendall(b"X")
            time.sleep(0.1)
    except OSError:  # closed by the server
        pass
    answer = b""
    while chunk := sock.recv(65536):  # left open, recv times out
        answer += chunk
    return answer


def test_headers_still_arriving_at_the_deadline_get_408_and_the_connection_closes(tmp_path):
    with serving(tmp_path, ECHO_APP) as (port, _), socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        answer = trickled_head(sock)
    assert answer.startswith(b"HTTP/1.1 408 ") and b"connection: close" in answer


def test_the_next_request_on_a_kept_alive_connection_has_its_own_deadline(tmp_path):
    with serving(tmp_path, ECHO_APP) as (port, _), socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
        first = sock.recv(65536)
        while not first.endswith(b"|/first|"):  # its head and body may come in two reads
            first += sock.recv(65536)
        answer = trickled_head(sock)
    assert first.startswith(b"HTTP/1.1 200 ") and first.endswith(b"|/first|")
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_a_connection_that_never_sends_a_request_is_closed_at_the_deadline(tmp_path):
    with serving(tmp_path, ECHO_APP) as (port, _), socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        assert sock.recv(100).startswith(b"HTTP/1.1 408 ")  # left open, recv would time out after 30 s
        assert sock.recv(100) == b""


def test_a_half_closed_connection_whose_answer_never_comes_is_closed_after_the_deadline(tmp_path):
    with (
        serving(tmp_path, SILENT_APP) as (port, _),
        socket.create_connection(("127.0.0.1", port), timeout=60) as sock,
    ):
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(100) == b""  # closed by the server; left open, recv would time out


def test_a_client_that_closes_before_reading_its_answer_leaves_no_socket_open(tmp_path):
    with serving(tmp_path, QUICK_APP) as (port, worker):
        # Counted once the worker has answered: one still booting has yet to open its loop's descriptors.
        exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        baseline = len(os.listdir(f"/proc/{worker}/fd"))
        for _ in range(200):  # each sends a whole request and closes at once: the answer meets a reset connection
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(b"POST /automation-k HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        wait_until(lambda: len(os.listdir(f"/proc/{worker}/fd")) < baseline + 10, 15, 0.2, "the sockets closed")


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_the_scheme_a_trusted_proxy_names_is_heeded_and_another_peer_s_is_not(tmp_path):
    request = b"GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n"
    with serving(tmp_path, ECHO_APP) as (port, _):  # gunicorn trusts 127.0.0.1 unless told otherwise
        assert exchange(port, request).split(b"\r\n\r\n", 1)[1].startswith(b"https|")
    with serving(tmp_path, ECHO_APP, "--forwarded-allow-ips", "10.9.9.9") as (port, _):
        assert exchange(port, request).split(b"\r\n\r\n", 1)[1].startswith(b"http|")


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", b"414"),
        (b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % n for n in range(101)) + b"\r\n", b"431"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n", b"431"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\nContent-Type: c/d\r\nContent-Length: 0\r\n\r\n", b"400"),
    ],
    ids=["request line", "fields", "field", "two hosts", "two content types"],
)
def test_a_head_past_gunicorn_s_limits_or_with_a_repeated_singleton_field_is_refused(tmp_path, head, status):
    with serving(tmp_path, ECHO_APP) as (port, _):
        assert exchange(port, head).startswith(b"HTTP/1.1 " + status + b" ")


def test_a_head_that_never_ends_is_refused_once_it_passes_the_limit(tmp_path):
    limits = ("--limit-request-line", "100", "--limit-request-fields", "2", "--limit-request-field_size", "100")
    with serving(tmp_path, ECHO_APP, *limits) as (port, _):  # a head of at most 100 + 2 x 102 + 4 bytes
        # One header's value, never finished: httptools would hold it whole, however long.
        answer = exchange(port, b"GET / HTTP/1.1\r\nX-Endless: " + b"a" * 400)
    assert answer.startswith(b"HTTP/1.1 431 ")


def test_a_worker_whose_master_is_gone_stops(tmp_path):
    with serving(tmp_path, ECHO_APP, "--timeout", "2") as (port, worker):
        master = int(Path(f"/proc/{worker}/stat").read_text().split()[3])
        os.kill(master, signal.SIGKILL)
        wait_until(lambda: not Path(f"/proc/{worker}").exists() or _zombie(worker), 30, 0.2, "the worker to stop")


def _zombie(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


SLOW_APP = """
import asyncio


async def app(scope, receive, send):
    if scope["type"] == "http":
        await asyncio.sleep(1)  # the next request's head is read while this answer is under way
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]})
        await send({"type": "http.response.body", "body": b"first"})
"""


def test_a_pipelined_head_refused_while_an_answer_is_under_way_never_cuts_that_answer(tmp_path):
    first = b"GET /first HTTP/1.1\r\nHost: x\r\n\r\n"
    refused = b"GET /second HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n"  # over the field limit
    with serving(tmp_path, SLOW_APP) as (port, _):
        answer = exchange(port, first + refused)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\nfirst")  # whole, then closed
    assert b"431" not in answer
