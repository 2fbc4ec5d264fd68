"""`make run`'s process manager: every line of the Procfile, their output on one screen, stopped together.

Run: python -m edge.procfile [--ready NAME[*N]=PATTERN ...] [--under-make] [Procfile]. Ctrl-C (SIGINT) or
SIGTERM stops every process and exits 0 once all have stopped; a second Ctrl-C kills what is left at once.
When one process ends by itself, or one had to be killed, the others are stopped and the exit status is 1.

PROCFILE_BANNER, when set, is printed once every process is up: a process given `--ready NAME=PATTERN` is up
once it has printed a line PATTERN matches (a regular expression), N such lines with `NAME*N=PATTERN` (one
per worker process of a gunicorn master), any other at once; should one never
print it, the banner comes BANNER_SECONDS after the start. The processes do not inherit the variable.

--under-make: GNU make runs this manager as its recipe's command (`make run`). Ctrl-C reaches the whole
foreground group, this manager too; an IDE or a supervisor signals make's pid alone. Sent SIGTERM, make
passes it on to its child; sent SIGINT or SIGHUP, it tells its children nothing and waits for them, so
the processes would run on. make's handler of a fatal signal first resets that signal to its default
(to raise it again once its children are gone), which Linux shows in /proc/<pid>/status (SigCgt): once
make no longer catches SIGINT, SIGTERM or SIGHUP, or once make is gone, every process is stopped as if
this manager had been sent the signal. Elsewhere than Linux only make's end is seen.

honcho, used before, sent SIGTERM to each process's whole group and SIGKILL five seconds later. The
Celery worker's pool processes died of the SIGTERM meant for their parent, which logged an error for
each, and on the embedded default's file broker the worker's warm shutdown takes six to seven seconds
(its loop polls the broker's folder for two seconds at a time, then the pool and its timer threads
stop), so it was killed mid-shutdown. Here, as systemd's KillMode=mixed does, SIGTERM goes to each
process's main pid only, which stops its own children; whatever is left of a process's group after
PROCFILE_STOP_SECONDS (30) gets SIGKILL.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from config.env import env_int

BANNER_SECONDS = 60
# The signals GNU make treats as fatal and handles by waiting for its children.
MAKE_STOPS_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class Process:
    name: str
    command: str
    ready: re.Pattern | None = None  # a line that shows the process is up
    ready_lines: int = 1  # how many such lines: one per worker process of a master
    up: bool = False
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


class Make:
    """The make process this manager runs under: whether it was sent a signal that stops it, or is gone."""

    def __init__(self):
        self.pid = os.getppid()
        self.caught = _caught_signals(self.pid)

    def stop_signal(self) -> int | None:
        """The signal make was sent (SIGTERM once make is gone), or None while it runs on."""
        if os.getppid() != self.pid:
            return signal.SIGTERM
        caught = _caught_signals(self.pid)
        for signum in MAKE_STOPS_ON:
            mask = 1 << (signum - 1)
            if self.caught & mask and not caught & mask:
                return signum
        return None


def _caught_signals(pid: int) -> int:
    """The signals a process has handlers for (Linux's SigCgt mask); 0 where /proc does not say."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


class Manager:
    def __init__(
        self,
        processes: list[Process],
        *,
        stop_seconds: int,
        banner: str = "",
        make: Make | None = None,
        out=sys.stdout,
    ):
        self.processes = processes
        self.stop_seconds = stop_seconds
        self.banner = banner
        self.make = make
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

    def show_banner(self, *, anyway: bool = False) -> None:
        """Print the banner once, when every process is up (or `anyway`)."""
        with self.printing:
            if self.banner and (anyway or all(p.up for p in self.processes)):
                self.out.write(f"\n{self.banner.strip(chr(10))}\n\n")
                self.out.flush()
                self.banner = ""

    def start(self) -> None:
        environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for process in self.processes:
            process.up = process.ready is None
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
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.say(process.name, line)
            if not process.up and process.ready.search(line):
                process.ready_lines -= 1
                if process.ready_lines <= 0:
                    process.up = True
                    self.show_banner()
        process.popen.wait()
        with self.changed:
            self.changed.notify_all()

    def running(self) -> list[Process]:
        return [p for p in self.processes if p.popen.poll() is None]

    def on_signal(self, signum, frame) -> None:
        if self.requested is None:
            self.request_stop(signum, "received")
        elif signum == signal.SIGINT:  # make passes its own SIGTERM on: only a second Ctrl-C forces
            self.forced = True
        with self.changed:
            self.changed.notify_all()

    def request_stop(self, signum: int, how: str) -> None:
        self.requested = signum
        self.say("system", f"{signal.Signals(signum).name} {how}: stopping every process (Ctrl-C again kills)")

    def run(self) -> int:
        signal.signal(signal.SIGINT, self.on_signal)
        signal.signal(signal.SIGTERM, self.on_signal)
        self.start()
        self.show_banner()  # when no process has a ready line
        started = time.monotonic()
        with self.changed:
            while self.requested is None and len(self.running()) == len(self.processes):
                self.changed.wait(1)
                if time.monotonic() - started > BANNER_SECONDS:
                    self.show_banner(anyway=True)
                if self.make and self.requested is None and (signum := self.make.stop_signal()):
                    self.request_stop(signum, "sent to make")
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
    parser = argparse.ArgumentParser(prog="python -m edge.procfile")
    parser.add_argument("procfile", nargs="?", default="Procfile")
    parser.add_argument("--ready", action="append", default=[], metavar="NAME[*N]=PATTERN")
    parser.add_argument("--under-make", action="store_true")
    options = parser.parse_args(argv)
    processes = read_procfile(options.procfile)
    if not processes:
        raise SystemExit("the Procfile lists no process")
    by_name = {process.name: process for process in processes}
    for ready in options.ready:
        name, _, pattern = ready.partition("=")
        name, star, count = name.partition("*")
        if name not in by_name or not pattern or (star and not (count.isdigit() and int(count) > 0)):
            raise SystemExit(f"--ready {ready}: expected NAME[*N]=PATTERN, NAME one of {', '.join(by_name)}")
        by_name[name].ready = re.compile(pattern)
        by_name[name].ready_lines = int(count or 1)
    stop_seconds = env_int("PROCFILE_STOP_SECONDS", 30, minimum=1)
    banner = os.environ.pop("PROCFILE_BANNER", "")
    make = Make() if options.under_make else None
    return Manager(processes, stop_seconds=stop_seconds, banner=banner, make=make).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
