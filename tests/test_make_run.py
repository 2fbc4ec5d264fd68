"""`make run`: it refuses to serve DEBUG pages, or a listen-only address as its URL, beyond this machine; Ctrl-C
stops it quietly.

In the refusal tests the database named refuses connections (nothing listens
on port 9), so even a `make run` that failed to refuse would stop at its
first migration instead of serving anything.
"""

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import threading

import pytest

from tests.test_settings import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make_run(tmp_path, **variables) -> subprocess.CompletedProcess:
    unset = ("DEBUG", "SECRET_KEY", "BASE_URL", "HOOKS_URL", "MCP_URL")
    keep = {k: v for k, v in os.environ.items() if k not in unset}
    environment = {
        **keep,
        "FLOWGATE_VAR_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://nobody@127.0.0.1:9/none",
        "REDIS_URL": "redis://127.0.0.1:9/0",
        **variables,
    }
    # -o install: use the environment as it is rather than install into it.
    return subprocess.run(
        ["make", "-o", "install", "run"], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(("name", "bind"), [("WEB_BIND", "0.0.0.0:8000"), ("HOOKS_BIND", "0.0.0.0:8001")])
def test_make_run_refuses_debug_on_a_public_bind(tmp_path, name, bind):
    result = make_run(tmp_path, **{name: bind})
    assert result.returncode != 0
    assert f"DEBUG is on and {name}={bind} accepts connections from other machines" in result.stderr
    assert "set DEBUG=0 and SECRET_KEY" in result.stderr


def test_make_run_on_a_public_bind_needs_the_url_clients_use(tmp_path):
    result = make_run(tmp_path, DEBUG="0", SECRET_KEY="x" * 50, WEB_BIND="0.0.0.0:8000")
    assert result.returncode != 0
    assert "BASE_URL=http://0.0.0.0:8000 names 0.0.0.0, an address to listen on" in result.stderr


def _free_ports(count: int) -> list[int]:
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def _lines_until(process: subprocess.Popen, lines: queue.Queue, done, seconds: int = 240) -> str:
    """Output of process until done(output) holds; fails if it ends or is silent for `seconds`."""
    output = ""
    while not done(output):
        try:
            line = lines.get(timeout=seconds)
        except queue.Empty:
            line = ""
        assert line, f"make run ended or fell silent before it was ready:\n{output}"
        output += line
    return output


def _everything_started(output: str) -> bool:
    """The worker and beat are up, and the web and hooks processes have booted their two workers each."""
    return (
        bool(re.search(r"celery@\S+ ready", output))
        and "beat: schedule ready" in output  # after "beat: Starting", once the schedule file is open
        and output.count("Application startup complete") == 2
        and output.count("Booting worker") == 4
    )


def test_ctrl_c_stops_make_run_quietly_and_every_process_cleanly(tmp_path):
    web_port, hooks_port = _free_ports(2)
    unset = ("DEBUG", "SECRET_KEY", "BASE_URL", "HOOKS_URL", "MCP_URL", "DATABASE_URL", "REDIS_URL")
    environment = {
        **{k: v for k, v in os.environ.items() if k not in unset},
        "FLOWGATE_VAR_DIR": str(tmp_path),
        "WEB_BIND": f"127.0.0.1:{web_port}",
        "HOOKS_BIND": f"127.0.0.1:{hooks_port}",
        "WEB_CONCURRENCY": "2",
    }
    # Its own process group, as a terminal's foreground job: Ctrl-C reaches make and what it runs in that group.
    # With Ctrl-C's default effect, as a shell starts a job: an ignored SIGINT (a test runner's process may have
    # one) survives exec, and make then keeps ignoring it.
    process = subprocess.Popen(
        ["make", "-o", "install", "run"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout] + [lines.put("")], daemon=True).start()
    try:
        started = _lines_until(process, lines, _everything_started)
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=120)
        stopping = "".join(iter(lines.get, ""))
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    # make ends as any command Ctrl-C interrupts (the shell shows status 130), with nothing of its own to say.
    assert process.returncode == -signal.SIGINT, started + stopping
    for noise in ("Error", "ERROR", "SIGKILL", "Traceback", "still running", "Interrupt"):
        assert noise not in stopping, stopping
    for name in ("web", "hooks", "worker", "beat"):
        assert f"{name} stopped (rc=0)" in stopping
