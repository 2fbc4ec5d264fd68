"""`make run`'s process manager: every line of the Procfile, their output on one screen, stopped together.

Run: python -m edge.procfile [Procfile]. Ctrl-C (SIGINT) or SIGTERM stops every process and exits 0
once all have stopped; a second Ctrl-C kills what is left at once. When one process ends by itself, or
one had to be killed, the others are stopped and the exit status is 1.

honcho, used before, sent SIGTERM to each process's whole group and SIGKILL five seconds later. The
Celery worker's pool processes died of the SIGTERM meant for their parent, which logged an error for
each, and on the embedded default's file broker the worker's warm shutdown takes six to seven seconds
(its loop polls the broker's folder for two seconds at a time, then the pool and its timer threads
stop), so it was killed mid-shutdown. Here, as systemd's KillMode=mixed does, SIGTERM goes to each
process's main pid only, which stops its own children; whatever is left of a process's group after
PROCFILE_STOP_SECONDS (30) gets SIGKILL.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from config.env import env_int


@dataclass
class Process:
    name: str
    command: str
    popen: subprocess.Popen | None = None
    reader: threading.Thread | None = field(default=None, repr=False)


def read_procfile(path: str) -> list[Process]:
    """`name: command` lines; blank lines and # comments are skipped."""
    processes = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, separator, command = line.partition(":")
            if not separator or not name.strip().isidentifier() or not command.strip():
                raise SystemExit(f"{path}:{number}: expected `name: command`, found {line.strip()!r}")
            processes.append(Process(name.strip(), command.strip()))
    return processes


class Manager:
    def __init__(self, processes: list[Process], *, stop_seconds: int, out=sys.stdout):
        self.processes = processes
        self.stop_seconds = stop_seconds
        self.out = out
        self.width = max(len(p.name) for p in processes + [Process("system", "")])
        self.printing = threading.RLock()  # say() also runs in the signal handler
        self.changed = threading.Condition()
        self.requested: int | None = None  # the signal that asked for the stop
        self.forced = False

    def say(self, name: str, text: str) -> None:
        with self.printing:
            self.out.write(f"{time.strftime('%H:%M:%S')} {name:<{self.width}} | {text}\n")
            self.out.flush()

    def start(self) -> None:
        environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for process in self.processes:
            # exec: the program is the group's leader, so its pid is the one that gets SIGTERM.
            process.popen = subprocess.Popen(
                ["/bin/sh", "-c", f"exec {process.command}"],
                env=environment,
                start_new_session=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            self.say("system", f"{process.name} started (pid={process.popen.pid})")
            process.reader = threading.Thread(target=self.relay, args=(process,), daemon=True)
            process.reader.start()

    def relay(self, process: Process) -> None:
        """Print the process's lines until it exits (its children may still hold the pipe), then report."""
        for raw in iter(process.popen.stdout.readline, b""):
            self.say(process.name, raw.decode("utf-8", "replace").rstrip("\n"))
        process.popen.wait()
        with self.changed:
            self.changed.notify_all()

    def running(self) -> list[Process]:
        return [p for p in self.processes if p.popen.poll() is None]

    def on_signal(self, signum, frame) -> None:
        if self.requested is None:
            self.requested = signum
            self.say("system", f"{signal.Signals(signum).name} received: stopping every process (Ctrl-C again kills)")
        elif signum == signal.SIGINT:  # make passes its own SIGTERM on: only a second Ctrl-C forces
            self.forced = True
        with self.changed:
            self.changed.notify_all()

    def run(self) -> int:
        signal.signal(signal.SIGINT, self.on_signal)
        signal.signal(signal.SIGTERM, self.on_signal)
        self.start()
        with self.changed:
            while self.requested is None and len(self.running()) == len(self.processes):
                self.changed.wait(1)
        ended = [p for p in self.processes if p.popen.poll() is not None]
        for process in ended:
            self.say("system", f"{process.name} stopped by itself (rc={process.popen.returncode})")
        killed = self.stop()
        return 0 if self.requested is not None and not ended and not killed else 1

    def stop(self) -> bool:
        """Stop every process; True when one had to be killed."""
        for process in self.running():
            self.say("system", f"stopping {process.name} (SIGTERM to pid {process.popen.pid})")
            _signal(process.popen.pid, signal.SIGTERM, group=False)
        deadline = time.monotonic() + self.stop_seconds
        with self.changed:
            while self.running() and not self.forced and time.monotonic() < deadline:
                self.changed.wait(min(1, max(0, deadline - time.monotonic())))
        stubborn = self.running()
        for process in stubborn:
            why = "a second signal" if self.forced else f"{self.stop_seconds} s"
            self.say("system", f"{process.name} still running after {why}: SIGKILL to its group")
        for process in self.processes:
            # Also whatever a stopped main process left behind in its group.
            _signal(process.popen.pid, signal.SIGKILL, group=True)
            process.popen.wait()
            process.reader.join(5)
            self.say("system", f"{process.name} stopped (rc={process.popen.returncode})")
        return bool(stubborn)


def _signal(pid: int, signum: int, *, group: bool) -> None:
    try:
        os.killpg(pid, signum) if group else os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def main(argv: list[str]) -> int:
    processes = read_procfile(argv[0] if argv else "Procfile")
    if not processes:
        raise SystemExit("the Procfile lists no process")
    stop_seconds = env_int("PROCFILE_STOP_SECONDS", 30, minimum=1)
    return Manager(processes, stop_seconds=stop_seconds).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
