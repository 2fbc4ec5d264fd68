"""Where a webhook's CPU time goes in the hooks process under load: a sampled profile, by part of the path.

Run (as root, or with ptrace allowed): .venv/bin/python benchmarks/profile_hooks.py [--seconds 20]
    [--connections 32] [--rate 250]
The hooks process as benchmarks/webhooks.py starts it (2 processes on uvicorn's worker, PostgreSQL and
Redis), wrk posting the same 1 KB JSON body to an automation's URL while py-spy samples each hooks process
(--nonblocking: the process is never paused, so the rate under the profiler stays near the rate without it).
Each sampled stack is charged to the deepest frame that belongs to a part of the path (PARTS, first match
from the leaf up), and each part's share of the samples is turned into microseconds of the hooks processes'
CPU per request (their CPU time over the window, from /proc, divided by the requests wrk counted). The
CPU the request costs outside the hooks process (PostgreSQL's backends, Redis) is read from /proc the same
way. Reported, never asserted.
"""

import argparse
import collections
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from common import PYTHON, ROOT, bench_env, prepare, start_gunicorn, wrk
from webhooks import SETUP, SIGNING_SECRET

PORT = 8934
# (part, patterns): a frame belongs to the first part one of whose patterns it contains. A stack is charged to
# the deepest frame that belongs to any part, so a psycopg frame under the writer's commit is the commit's.
PARTS = [
    ("the broker message (Celery, kombu, redis-py)", ("_publish (", "/kombu/", "/celery/", "/redis/")),
    ("the writer: INSERT and COMMIT (psycopg)", ("hooks/statements.py", "hooks/loop_connection.py", "/psycopg/")),
    ("the writer: gathering rows on the loop", ("hooks/intake.py",)),
    ("key lookup (hooks/selectors.py, verification)", ("hooks/selectors.py", "hooks/verification.py")),
    ("the body read (edge/bodies.py)", ("edge/bodies.py",)),
    ("the row built (ids, digest)", ("hooks/services.py", "hooks/incoming.py", "/uuid.py")),
    ("the answer and its headers", ("hooks/answers.py", "edge/replies.py", "_respond (", "_encoded (")),
    ("request routing and headers read", ("hooks/routes.py", "_headers (", "hooks/maintenance.py")),
    ("the hooks application's own lines (hooks/asgi.py)", ("hooks/asgi.py",)),
    ("HTTP parsing and writing (uvicorn, httptools)", ("/uvicorn/", "/httptools/", "overrides/")),
    # The loop thread giving a job to a thread (the writer's commit, a lookup) and that thread woken for it.
    ("thread hand-offs (a job queued for a thread, the thread woken)", ("concurrent/futures/thread.py",)),
    # Frames of asyncio's Python code, and the loop's own C code (uvloop: sockets, callbacks) under Runner.run.
    ("the event loop (uvloop's sockets and callbacks, asyncio)", ("/asyncio/", "/uvloop/")),
    ("gunicorn's worker", ("/gunicorn/", "edge/asgi_worker.py")),
]
OTHER = "other (threads' start, logging, the rest)"


def children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time of the processes (their threads included), in seconds."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def pids_named(pattern: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def part_of(stack: str) -> str:
    for frame in reversed(stack.split(";")):
        for part, patterns in PARTS:
            if any(pattern in frame for pattern in patterns):
                return part
    return OTHER


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rate", type=int, default=250, help="py-spy's samples a second per process")
    parser.add_argument("--database", default="flowgate_bench_profile")
    parser.add_argument("--redis-db", default="2")
    args = parser.parse_args()

    env = bench_env(args.database, PORT, args.redis_db)
    key = prepare(env, SETUP.replace("SIGNING_SECRET", repr(SIGNING_SECRET))).split()[0]
    host = {"Host": f"127.0.0.1:{PORT}"}
    server = start_gunicorn(env, PORT, app="benchmarks.baselines_wsgi:asgi_application", asgi=True, host=host["Host"])
    url = f"http://127.0.0.1:{PORT}/automation-{key}"
    workdir = Path(tempfile.mkdtemp(prefix="profile-hooks-"))
    try:
        hooks = children(server.pid)
        unprofiled = wrk(url, connections=args.connections, seconds=args.seconds, script="post.lua", headers=host)
        outside = pids_named(f"postgres: .*{args.database}") + pids_named("redis-server")
        spies = [
            subprocess.Popen(
                [str(Path(PYTHON).parent / "py-spy"), "record", "--pid", str(pid), "--duration", str(args.seconds)]
                + ["--rate", str(args.rate), "--format", "raw", "--nonblocking", "--threads", "--full-filenames"]
                + ["--output", str(workdir / f"{pid}.txt")],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for pid in hooks
        ]
        time.sleep(1)  # py-spy attached before the load begins
        before, outside_before = cpu_seconds(hooks), cpu_seconds(outside)
        profiled = wrk(url, connections=args.connections, seconds=args.seconds, script="post.lua", headers=host)
        hooks_cpu, outside_cpu = cpu_seconds(hooks) - before, cpu_seconds(outside) - outside_before
        for spy in spies:
            spy.wait()
    finally:
        server.terminate()
        server.wait()

    samples: collections.Counter = collections.Counter()
    for path in workdir.glob("*.txt"):
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if stack:
                samples[part_of(re.sub(r" \(thread 0x[0-9a-f]+\)", "", stack))] += int(count)
    total = sum(samples.values()) or 1
    requests = profiled["requests"]
    per_request = hooks_cpu / requests * 1e6
    print(f"\n{args.connections} connections, {args.seconds} s, {args.rate} samples/s per process, {url}")
    print(f"without the profiler: {unprofiled['rps']:,.0f} req/s, p99 {unprofiled['p99_ms']:.1f} ms")
    print(f"under the profiler:   {profiled['rps']:,.0f} req/s, p99 {profiled['p99_ms']:.1f} ms, {requests:,} requests")
    print(f"hooks processes' CPU: {hooks_cpu:.1f} s, {per_request:.0f} us a request")
    print(f"PostgreSQL's and Redis's CPU: {outside_cpu:.1f} s, {outside_cpu / requests * 1e6:.0f} us a request\n")
    print("| part | share of samples | us a request |\n|---|---|---|")
    for part, count in samples.most_common():
        print(f"| {part} | {count / total:.1%} | {count / total * per_request:.0f} |")
    print(f"\nstacks: {workdir}")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
