"""The web processes as the Procfile starts them (edge/gunicorn.py), started for real on a free port."""

import http.client
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from tests.e2e.stack import ROOT, free_port, wait_until

pytestmark = pytest.mark.e2e


def _env(port: int) -> dict:
    return {
        **os.environ,
        "DEBUG": "1",
        "BASE_URL": f"http://127.0.0.1:{port}",
        "WEB_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "2",
        "LOG_LEVEL": "WARNING",
    }


def _gunicorn() -> list[str]:
    return [sys.executable, "-m", "gunicorn", "config.wsgi", "-c", "edge/gunicorn.py", "--log-level", "warning"]


@pytest.fixture
def server():
    port = free_port()
    process = subprocess.Popen(_gunicorn(), cwd=ROOT, env=_env(port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # Each process binds its own socket as it boots: wait for both, or the first takes everything.
        wait_until(lambda: _listeners(port) == 2 or process.poll() is not None, 30, 0.2, "both processes to listen")
        assert process.poll() is None, process.stderr.read().decode()
        yield port, process
    finally:
        _stop(process)


def _stop(process: subprocess.Popen) -> None:
    """Ask gunicorn to stop, reading its stderr meanwhile: a full pipe would hold its shutdown log forever."""
    process.terminate()
    try:
        process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise


def _listeners(port: int) -> int:
    out = subprocess.run(["ss", "-tlnH", f"( sport = :{port} )"], check=True, capture_output=True, text=True).stdout
    return len(out.splitlines())


def _holders(port: int) -> dict[str, int]:
    """How many established connections to port each process holds."""
    out = subprocess.run(
        ["ss", "-tnpH", "state", "established", f"( sport = :{port} )"], check=True, capture_output=True, text=True
    ).stdout
    counts: dict[str, int] = {}
    for pid in re.findall(r"pid=(\d+)", out):
        counts[pid] = counts.get(pid, 0) + 1
    return counts


def test_keep_alive_connections_are_dealt_over_every_web_process(server):
    port, _ = server
    # Opened all at once, as wrk or a load balancer opens its pool: with one shared socket the
    # process that wakes first takes most of them (edge/gunicorn.py, benchmarks/RESULTS.md).
    clients = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(32)]
    try:
        for client in clients:
            client.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
        for client in clients:
            assert client.recv(65536).startswith(b"HTTP/1.1 ")
        counts = wait_until(lambda: (c := _holders(port)) and sum(c.values()) == 32 and c, 10, 0.1, "32 connections")
        # Each process's own socket gets a share by hash: fewer than 4 of 32 happens about 3 times in a million.
        assert len(counts) == 2 and min(counts.values()) >= 4, counts
    finally:
        for client in clients:
            client.close()


def test_a_second_server_on_a_listening_address_refuses_to_start(server):
    port, _ = server
    second = subprocess.run(_gunicorn(), cwd=ROOT, env=_env(port), capture_output=True, text=True, timeout=60)
    assert second.returncode != 0
    assert f"127.0.0.1:{port} is already in use" in second.stderr


def test_an_address_another_program_shares_by_port_reuse_is_refused():
    """Without the check, gunicorn's own sockets would join this one and split its traffic unnoticed."""
    port = free_port()
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other.bind(("127.0.0.1", port))
        other.listen()
        second = subprocess.run(_gunicorn(), cwd=ROOT, env=_env(port), capture_output=True, text=True, timeout=60)
    assert second.returncode != 0
    assert "already in use" in second.stderr


def test_debug_refuses_to_start_on_an_address_other_machines_reach_whatever_the_command_line_says():
    port = free_port()
    refused = subprocess.run(
        [*_gunicorn(), "--bind", f"0.0.0.0:{port}"],
        cwd=ROOT,
        env=_env(port),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0
    assert f"DEBUG is on and 0.0.0.0:{port} accepts connections from other machines" in refused.stderr


def test_it_says_where_it_listens_and_leaves_no_control_socket_in_home(tmp_path):
    """gunicorn's control socket defaults to ~/.gunicorn/gunicorn.ctl, one path for every gunicorn of the user."""
    port = free_port()
    command = [*_gunicorn()[:-2], "--log-level", "info"]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**_env(port), "HOME": str(tmp_path), "XDG_RUNTIME_DIR": ""},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        while sum("Booting worker" in line for line in lines) < 2:
            line = process.stderr.readline()
            assert line, "".join(lines)
            lines.append(line)
        wait_until(lambda: _listeners(port) == 2, 30, 0.2, "both processes to listen")
    finally:
        _stop(process)
    listening = [line for line in lines if "Listening at:" in line]
    assert len(listening) == 1 and f"Listening at: http://127.0.0.1:{port} (a socket per worker) (" in listening[0]
    assert not (tmp_path / ".gunicorn").exists()


def test_a_hooks_worker_that_ends_without_its_lifespan_sends_the_ids_its_writer_committed(monkeypatch, sent_deliveries):
    from edge import gunicorn as gunicorn_settings
    from hooks import intake

    monkeypatch.setattr(intake.writer, "unsent", [7, 8])  # committed, their message not due yet
    gunicorn_settings.worker_exit(server=None, worker=None)  # as gunicorn calls it in the worker, on SIGINT too
    assert sent_deliveries == [[7, 8]]


@pytest.mark.parametrize(
    "application", [["config.wsgi"], ["config.asgi", "-k", "edge.asgi_worker.Worker"]], ids=["web", "hooks"]
)
def test_a_connection_left_idle_for_three_seconds_still_carries_the_next_request(application):
    """gunicorn closes idle connections after 2 s by default, which a client dropping its own at 1 s met as a reset
    when its loop stalled (edge/gunicorn.py)."""
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", *application, "-c", "edge/gunicorn.py", "--log-level", "warning"]
    process = subprocess.Popen(command, cwd=ROOT, env=_env(port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: _listeners(port) == 2 or process.poll() is not None, 30, 0.2, "both processes to listen")
        assert process.poll() is None, process.stderr.read().decode()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        answers = []
        for pause in (0, 3):
            time.sleep(pause)
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            response.read()
            answers.append((response.status, connection.sock.getsockname()))
        connection.close()
    finally:
        _stop(process)
    assert [status for status, _ in answers] == [200, 200]
    assert answers[0][1] == answers[1][1]  # the same connection, kept
