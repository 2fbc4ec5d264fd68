"""`make run`: it refuses to serve DEBUG pages, or a listen-only address as its URL, beyond this machine, and a
second start on addresses in use; its banner comes after start-up's output; Ctrl-C, or a signal sent to make
alone, stops every process.

In the refusal tests the database named refuses connections (nothing listens
on port 9), so even a `make run` that failed to refuse would stop at its
first migration instead of serving anything.
"""

import http.cookiejar
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.test_settings import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


RESET = (
    "to choose a new password: DEBUG=1 .venv/bin/python manage.py changepassword admin  "
    "(with this start's FLOWGATE_VAR_DIR)"
)


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
    # Its own process group, as a terminal's foreground job: Ctrl-C reaches make and what it runs in that group.
    process, lines = _start_make_run(tmp_path)
    try:
        started = _lines_until(process, lines, _everything_started)
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=120)
        stopping = "".join(iter(lines.get, ""))
    finally:
        _stop_left_running(process)
    # make ends as any command Ctrl-C interrupts (the shell shows status 130), with nothing of its own to say.
    assert process.returncode == -signal.SIGINT, started + stopping
    for noise in ("Error", "ERROR", "SIGKILL", "Traceback", "still running", "Interrupt"):
        assert noise not in stopping, stopping
    for name in ("web", "hooks", "worker", "beat"):
        assert f"{name} stopped (rc=0)" in stopping


@pytest.mark.parametrize("name", ["WEB_BIND", "HOOKS_BIND"])
def test_a_second_make_run_stops_before_it_migrates_and_names_the_bind_in_use(tmp_path, name):
    (port,) = _free_ports(1)
    with socket.socket() as first_run:
        first_run.bind(("127.0.0.1", port))
        first_run.listen()
        result = make_run(tmp_path, **{name: f"127.0.0.1:{port}"})
    assert result.returncode != 0
    assert f"127.0.0.1:{port} is in use ({name}): another make run? Stop it" in result.stderr
    assert f"make run {name}=127.0.0.1:{port + 100}" in result.stderr
    assert "migrate" not in result.stdout + result.stderr


def _stop_left_running(process: subprocess.Popen) -> None:
    """After a failed check: SIGTERM first, so the process manager stops the processes it started each in a session
    of its own (a SIGKILL of make's group alone left them running), then SIGKILL whatever is left of the group."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _start_make_run(tmp_path) -> tuple[subprocess.Popen, queue.Queue]:
    web_port, hooks_port = _free_ports(2)
    unset = ("DEBUG", "SECRET_KEY", "BASE_URL", "HOOKS_URL", "MCP_URL", "DATABASE_URL", "REDIS_URL")
    environment = {
        **{k: v for k, v in os.environ.items() if k not in unset},
        "FLOWGATE_VAR_DIR": str(tmp_path),
        "WEB_BIND": f"127.0.0.1:{web_port}",
        "HOOKS_BIND": f"127.0.0.1:{hooks_port}",
        "WEB_CONCURRENCY": "2",
    }
    # Its own session and process group, as a terminal's foreground job or as an IDE or a supervisor starts it.
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
    return process, lines


def _descendants(pid: int) -> set[int]:
    """Every process below pid, from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rpartition(")")[2].split()[1])
            except (OSError, ValueError):
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rpartition(")")[2].split()[0] != "Z":
                    alive.add(pid)
        except OSError:
            pass
    return alive


def _sign_in(base_url: str, password: str) -> int:
    """Sign in to admin over HTTP; the status of the sign-in's answer (302 when the password is right)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    cookies = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies), NoRedirect)
    page = opener.open(f"{base_url}/admin/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token, "username": "admin", "password": password, "next": "/admin/"}
    ).encode()
    request = urllib.request.Request(f"{base_url}/admin/login/", data=form, headers={"Referer": base_url})
    try:
        return opener.open(request, timeout=30).status
    except urllib.error.HTTPError as answer:
        return answer.code


def _banner_shown(output: str) -> bool:
    return "Ctrl-C stops every process" in output


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_banner_comes_after_start_up_and_a_signal_sent_to_make_alone_stops_every_process(tmp_path, signum):
    """As an IDE or a supervisor stops it: the signal goes to make's pid, not to its group."""
    process, lines = _start_make_run(tmp_path)
    try:
        output = _lines_until(process, lines, _banner_shown)
        assert _everything_started(output), output
        banner = output[output.rindex("Flowgate is running on") :]
        base_url = re.search(r"Flowgate is running on (\S+)", banner).group(1)
        password = re.search(r"user admin, password: (\S+)  \(shown on this first start only\)", banner).group(1)
        assert RESET in banner
        assert output.count(password) == 1
        assert "webhook URL:" in output[output.index("celery@") :]  # the demos' URLs come with the banner
        assert _sign_in(base_url, password) == 302
        processes = _descendants(process.pid)
        assert len(processes) >= 9  # the manager; web, hooks and their two workers each; worker, its pool; beat
        os.kill(process.pid, signum)
        process.wait(timeout=120)
        stopping = "".join(iter(lines.get, ""))
    finally:
        _stop_left_running(process)
    # make passes SIGTERM on to the process manager; SIGINT it keeps, and the manager sees make stopping.
    heard = "SIGTERM received" if signum == signal.SIGTERM else "SIGINT sent to make"
    assert f"{heard}: stopping every process" in stopping, stopping
    for name in ("web", "hooks", "worker", "beat"):
        assert f"{name} stopped (rc=0)" in stopping, stopping
    assert _alive(processes) == set()
