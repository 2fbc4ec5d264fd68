"""Helpers shared by the benchmarks: a scratch PostgreSQL database, manage.py, gunicorn and wrk."""

import os
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
ATTEMPTS = 60


def bench_env(database: str, port: int, redis_db: str = "2", **settings: str) -> dict:
    """The environment of a benchmark's service: a new, empty PostgreSQL database, a Redis database of its own, and
    settings on top."""
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc"]
    subprocess.run([*psql, f"DROP DATABASE IF EXISTS {database}"], check=True)
    subprocess.run([*psql, f"CREATE DATABASE {database}"], check=True)
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "benchmark-only-secret-key",
        "URL_KEY_SECRET": "benchmark-only-url-key-secret",
        "CONNECTION_KEYS": "YmVuY2htYXJrLW9ubHktY29ubmVjdGlvbi1rZXktMDA=",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{database}",
        "REDIS_URL": f"redis://127.0.0.1:6379/{redis_db}",
        "BASE_URL": f"http://127.0.0.1:{port}",
        "LOG_LEVEL": "WARNING",
        "FLOWGATE_VAR_DIR": str(ROOT / "var" / "bench"),
        **settings,
    }


def empty_redis(env: dict) -> None:
    """Empty the Redis database of env's REDIS_URL: counters and queued messages of an earlier run."""
    database = env["REDIS_URL"].rsplit("/", 1)[1]
    subprocess.run(["redis-cli", "-n", database, "flushdb"], check=True, capture_output=True)


def prepare(env: dict, setup: str) -> str:
    """Migrate env's database and run setup (Python for manage.py shell) in it; the last line it printed.

    Redis is emptied before and after: turning an automation on queues a replay of its kept deliveries (none
    yet), which, left in the queue, would meet the benchmark's backlog when a worker starts and run it one at a
    time."""
    empty_redis(env)
    manage(env, "migrate", "--noinput")
    last = manage(env, "shell", "-c", setup).strip().splitlines()[-1]
    empty_redis(env)
    return last


def manage(env: dict, *args: str) -> str:
    command = [PYTHON, "manage.py", *args]
    return subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout


def start_gunicorn(
    env: dict, port: int, app: str = "config.wsgi", *, asgi: bool = False, host: str | None = None
) -> subprocess.Popen:
    """gunicorn as the Procfile runs it (edge/gunicorn.py): 2 processes of 8 threads, no access log.

    BENCH_WORKERS and BENCH_THREADS override the counts.

    asgi: as the Procfile's hooks process, on its worker (edge/asgi_worker.py);
    its thread pool for requests other than webhooks has the same 8 threads.
    host: the Host its requests name, when it serves a configured host on another port.
    """
    workers = os.environ.get("BENCH_WORKERS", "2")
    threads = os.environ.get("BENCH_THREADS", "8")
    worker = ["-k", "edge.asgi_worker.Worker"] if asgi else ["--threads", threads]
    process = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "gunicorn",
            app,
            "-c",
            "edge/gunicorn.py",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            workers,
            *worker,
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env={**env, "WEB_THREADS": threads},
    )
    for _ in range(100):
        try:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers={"Host": host} if host else {})
            urllib.request.urlopen(request, timeout=1)
            # Each process binds a socket of its own as it boots (edge/gunicorn.py): wait for all of them.
            if _listeners(port) == int(workers):
                return process
            time.sleep(0.2)
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("gunicorn did not start")


def _listeners(port: int) -> int:
    out = subprocess.run(["ss", "-tlnH", f"( sport = :{port} )"], check=True, capture_output=True, text=True).stdout
    return len(out.splitlines())


def connections_per_process(port: int) -> list[int]:
    """How many established connections to `port` each server process holds, largest first."""
    command = ["ss", "-tnpH", "state", "established", f"( sport = :{port} )"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    counts: dict[str, int] = {}
    for pid in re.findall(r"pid=(\d+)", out):
        counts[pid] = counts.get(pid, 0) + 1
    return sorted(counts.values(), reverse=True)


def wrk(
    url: str,
    *,
    connections: int,
    seconds: int,
    headers: dict | None = None,
    script: str | None = None,
    env: dict | Callable[[], dict] | None = None,
    threads: int = 1,
    processes: int | None = None,
) -> dict:
    """wrk's requests per second, p99 and count of non-2xx/3xx answers; script is a Lua file under benchmarks/.

    gunicorn's threaded workers keep a keep-alive connection in the process
    that accepted it: 8 connections split 8/0 run at a third of a 4/4 split.
    Each process has a socket of its own (edge/gunicorn.py) and the kernel
    deals connections over them by a hash of their addresses, so a split is
    even only by chance (with one shared socket it was worse: at 32, 32/0 or
    29/3 came far more often than 16/16). A run is therefore kept only when
    its connections are spread evenly over the server's processes
    (BENCH_WORKERS of them), give or take an eighth of the connections;
    otherwise it is stopped and repeated, so that every case of a comparison
    meets the same split.
    "steal" is the share of the machine's CPU time the hypervisor gave to
    others during the kept attempt: rounds that lost much of it say so.
    `env` may be a function, called for each attempt (a repeated run must not
    reuse the rate-limited client addresses of the stopped one).
    `threads`: wrk threads; a script keeping state per connection runs one per connection.
    `processes`: the server's processes when it is not a gunicorn of BENCH_WORKERS (another program, say).
    """
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", url]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    if script:
        command += ["-s", str(ROOT / "benchmarks" / script)]
    port = int(re.search(r":(\d+)/", url)[1])
    workers = processes or int(os.environ.get("BENCH_WORKERS", "2"))
    even = [n for n in (connections // workers + (i < connections % workers) for i in range(workers)) if n]
    stopped = {"requests": 0, "errors": 0}  # answered during stopped attempts: they count toward what was stored
    for attempt in range(ATTEMPTS):
        before = _cpu_times()
        extra = env() if callable(env) else env
        run = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env={**os.environ, **(extra or {})})
        if os.environ.get("BENCH_THREADS") == "1":
            split = []  # sync workers close each connection after one request: no split to hold
            break
        split = _split_once_open(port, connections)
        if len(split) == len(even) and split[0] - split[-1] <= connections // 8 and sum(split) == connections:
            break
        if attempt == ATTEMPTS - 1:
            print(f"wrk: connections split {split} after {ATTEMPTS} attempts; kept uneven", file=sys.stderr)
            break
        run.send_signal(signal.SIGINT)  # wrk stops and still prints what it counted
        counted = _parse(run.communicate()[0])
        stopped["requests"] += counted["requests"]
        stopped["errors"] += counted["errors"]
        time.sleep(0.5)
    out, _ = run.communicate()
    if run.returncode:
        raise subprocess.CalledProcessError(run.returncode, command, out)
    spent = [after - then for then, after in zip(before, _cpu_times(), strict=True)]
    return {
        **_parse(out),
        "split": split,
        "attempts": attempt + 1,
        "steal": spent[7] / (sum(spent) or 1),
        "stopped_requests": stopped["requests"],
        "stopped_errors": stopped["errors"],
    }


def _cpu_times() -> list[int]:
    """The machine's CPU time so far by kind (/proc/stat): user, nice, system, idle, iowait, irq, softirq, steal."""
    with open("/proc/stat") as stat:
        return [int(n) for n in stat.readline().split()[1:9]]


def _parse(out: str) -> dict:
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])
    scales = {"us": 0.001, "ms": 1, "s": 1000}
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", out)
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)\b", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {
        "rps": rps,
        "p99_ms": float(p99[1]) * scales[p99[2]],
        "p50_ms": float(p50[1]) * scales[p50[2]],
        "errors": int(non2xx[1]) if non2xx else 0,
        "requests": int(re.search(r"(\d+) requests in", out)[1]),
        "socket_errors": sum(map(int, socket_errors.groups())) if socket_errors else 0,
    }


def _split_once_open(port: int, connections: int) -> list[int]:
    """The split of wrk's connections over the server processes, once all of them are open."""
    split: list[int] = []
    for _ in range(40):
        time.sleep(0.05)
        split = connections_per_process(port)
        if sum(split) >= connections:
            break
    return split


EMPTY = "empty view (/healthz)"


def interleaved(cases: dict[str, dict], *, rounds: int) -> dict[str, list[dict]]:
    """wrk once per case in each round, the cases in turn, so that drift on a shared machine hits them alike.

    `cases` maps a name to wrk's keyword arguments (url, connections, seconds,
    headers, script, env, threads); the answer maps it to its rounds' results.
    """
    results = {name: [] for name in cases}
    for _ in range(rounds):
        for name, arguments in cases.items():
            results[name].append(wrk(**arguments))
    return results


def print_table(results: dict[str, list[dict]], *, empty: str = EMPTY) -> None:
    """The median of the rounds per case, in a Markdown table, with each case's rate against the empty view's."""
    baseline = statistics.median(r["rps"] for r in results[empty])
    print("| case | req/s | p50 ms | p99 ms | vs empty view | non-2xx/3xx | connections per process |")
    print("|---|---|---|---|---|---|---|")
    for name, runs in results.items():
        rps = statistics.median(r["rps"] for r in runs)
        p50 = statistics.median(r["p50_ms"] for r in runs)
        p99 = statistics.median(r["p99_ms"] for r in runs)
        errors = sum(r["errors"] for r in runs)
        splits = ", ".join(sorted({"/".join(map(str, r["split"])) or "-" for r in runs}))
        splits += f" ({sum(r['attempts'] for r in runs)} starts)"
        print(f"| {name} | {rps:.0f} | {p50:.1f} | {p99:.1f} | {rps / baseline:.0%} | {errors} | {splits} |")
