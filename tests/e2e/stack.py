"""The whole service as separate processes for end-to-end tests: gunicorn, a Celery worker and beat."""

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

PR_SET_PDEATHSIG = 1  # linux/prctl.h

ROOT = Path(__file__).resolve().parents[2]
# The marks of a test module that starts the service's processes: they share its database, so the test's
# rows must be committed, and they need the real stack.
END_TO_END = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.REDIS_URL or connection.vendor != "postgresql",
        reason="end-to-end tests run on PostgreSQL and Redis",
    ),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(predicate, timeout: float = 30, interval: float = 0.1, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {message}")


HOOKS_WORKER = (
    "-k",
    "edge.asgi_worker.Worker",
)


def _empty_the_broker() -> None:
    """Empty the test Redis database (this test process's own: config/test_settings.py). Messages an earlier test
    queued with no worker to take them (a hooks process's, say) would otherwise come first to this stack's worker,
    which took over 90 s to work through them in one CI run, ahead of the sweeper's messages a test waited for."""
    import redis

    with redis.Redis.from_url(settings.REDIS_URL) as client:
        client.flushdb()


class Stack:
    """Web, hooks, worker and beat on the test database and the test Redis; each process in its own session.

    As the Procfile runs them: the web process (WSGI) serves BASE_URL and MCP_URL
    at `base`, the hooks process (config/asgi.py) serves HOOKS_URL at `hooks`.
    start_web(hooks_process=True) runs the one-process setup instead: the hooks
    process serves every host, at `base` (`hooks` is then the same). Start the
    web processes first: the others take HOOKS_URL from what they chose.
    """

    def __init__(self, tmp_path: Path, **overrides: str):
        _empty_the_broker()
        self.port, self.hooks_port = free_port(), free_port()
        self.base, self.hooks = f"http://127.0.0.1:{self.port}", f"http://127.0.0.1:{self.hooks_port}"
        database = connection.settings_dict
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": settings.SECRET_KEY,
            "URL_KEY_SECRET": settings.URL_KEY_SECRET,
            "CONNECTION_KEYS": ",".join(settings.CONNECTION_KEYS),
            "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
            "REDIS_URL": settings.REDIS_URL,
            "BASE_URL": self.base,
            "HOOKS_URL": self.hooks,
            "FLOWGATE_VAR_DIR": str(tmp_path),
            "LOG_LEVEL": "WARNING",
            **overrides,
        }
        self.logs = tmp_path
        self.processes: dict[str, subprocess.Popen] = {}

    def _start(self, name: str, *command: str) -> None:
        with open(self.logs / f"{name}.log", "ab") as log:  # the child keeps its own copy of the descriptor
            self.processes[name] = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_the_test_run,
            )

    def start_web(self, *, hooks_process: bool = False, web_only: bool = False) -> None:
        """The web and hooks processes as the Procfile runs them, or the hooks process alone serving every host.

        web_only: a web process alone serving every host, for tests of what it does with bodies (web services);
        it answers webhooks 421.
        """
        assert not (web_only and hooks_process), "one setup at a time"
        if web_only:
            self.hooks, self.hooks_port = self.base, self.port
            self.env["HOOKS_URL"] = self.hooks
            self._gunicorn("web", "config.wsgi", self.port, "--threads", "8")
        elif hooks_process:
            self.hooks, self.hooks_port = self.base, self.port
            self.env["HOOKS_URL"] = self.hooks
            self._gunicorn("web", "config.asgi:application", self.port, *HOOKS_WORKER)
        else:
            self._gunicorn("web", "config.wsgi", self.port, "--threads", "8")
            self._gunicorn("hooks", "config.asgi:application", self.hooks_port, *HOOKS_WORKER)
        wait_until(lambda: self._answers(self.base) and self._answers(self.hooks), 30, 0.2, "gunicorn to answer")

    def _gunicorn(self, name: str, app: str, port: int, *worker: str) -> None:
        bind, workers = f"127.0.0.1:{port}", "2"
        command = ["-m", "gunicorn", app, "-c", "edge/gunicorn.py", "--bind", bind, "--workers", workers, *worker]
        self._start(name, sys.executable, *command, "--log-level", "warning")

    def start_worker(self) -> None:
        self._start(
            "worker",
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--concurrency",
            "2",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--pool",
            "prefork",
        )

    def start_beat(self) -> None:
        self._start(
            "beat",
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            str(self.logs / "beat-schedule"),
        )

    def kill(self, name: str) -> None:
        """SIGKILL the process and its children: no shutdown, no acknowledgements, no requeue."""
        process = self.processes.pop(name)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        """SIGTERM each process's leader alone, as systemd's main-process kill mode does: a Celery worker's pool
        children then end under their parent's warm shutdown. Signalling the whole group made a child busy with
        a task die under its parent, which logs a WorkerLostError traceback for a shutdown that went as meant."""
        for process in list(self.processes.values()):
            process.send_signal(signal.SIGTERM)
        for process in list(self.processes.values()):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            try:
                os.killpg(process.pid, signal.SIGKILL)  # whatever of the group outlived its leader
            except ProcessLookupError:
                pass
        self.processes.clear()

    def tasks_done(self) -> bool:
        """No task waits in the broker or is held by a worker: the Redis transport's queue and unacked hash are
        empty. What a worker does with a delivery of an automation that is off leaves no trace elsewhere."""
        import redis

        with redis.Redis.from_url(settings.REDIS_URL) as client:
            return client.llen("celery") == 0 and client.hlen("unacked") == 0

    def sweeps_pass(self, count: int = 2, timeout: float = 60) -> None:
        """Wait until beat has sent the one sweeper count more times and the worker has run every task it queued:
        what has not happened by then happens on no later sweep, so a test may then say it did not happen."""
        sent = "Sending due task automations-sweep-runs"
        before = self.log("beat").count(sent)
        wait_until(lambda: self.log("beat").count(sent) >= before + count, timeout, message=f"{count} sweeps")
        wait_until(self.tasks_done, timeout, message="the worker to run what the sweeps queued")

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def _answers(self, base: str) -> bool:
        try:
            return urllib.request.urlopen(f"{base}/healthz", timeout=1).status == 200
        except OSError:
            return False


def die_with_the_test_run() -> None:
    """In the child, before exec: killed when the test process ends, however it ends.

    A test run stopped from outside (a timeout's SIGKILL) runs no fixture's stop: its gunicorn and Celery would go on
    holding the test database, and the next run on it would fail by the hundreds ("being accessed by other users").
    Their own children stop when they are orphaned (gunicorn's workers and Celery's pool watch their parent).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
