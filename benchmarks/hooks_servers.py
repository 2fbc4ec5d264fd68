"""The hooks process's application on three ASGI servers, in one run: which one accepts webhooks fastest.

Run: .venv/bin/python benchmarks/hooks_servers.py [--seconds 5] [--rounds 5]

The same application (config.asgi's, as benchmarks/baselines_wsgi.py serves
it), the same 2 processes, PostgreSQL and Redis for each:
- gunicorn 27's own asyncio worker (`-k asgi`);
- uvicorn's worker under gunicorn's master (uvloop and httptools, the
  gunicorn config of every other process: a socket per process), as the
  hooks process runs it (edge/asgi_worker.py);
- granian (its Rust HTTP/1 server, uvloop, its own supervisor).
The empty Django view of the web process (gunicorn's threaded worker) is the
yardstick. At 4 and 32 connections, rounds interleaved (every other round in
reverse order), the median of the rounds; afterwards each 200 counted is
checked against its delivery row.
"""

import argparse
import json
import os
import statistics
import subprocess
import time
import urllib.request

from common import PYTHON, ROOT, bench_env, prepare, start_gunicorn, wrk
from webhooks import COUNT, SETUP, SIGNING_SECRET

PORT = 8952
APP = "benchmarks.baselines_wsgi:asgi_application"
SERVERS = {
    "gunicorn asyncio worker": ["-k", "asgi"],
    "uvicorn worker (uvloop, httptools)": ["-k", "edge.asgi_worker.Worker"],
}


def start_gunicorn_asgi(env: dict, port: int, worker: list[str]) -> subprocess.Popen:
    command = [PYTHON, "-m", "gunicorn", APP, "-c", "edge/gunicorn.py", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", "2", "--threads", "1", *worker, "--log-level", "warning"]
    return _started(subprocess.Popen(command, cwd=ROOT, env=env), port)


def start_granian(env: dict, port: int) -> subprocess.Popen:
    command = [PYTHON, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--workers", "2", "--loop", "uvloop", "--no-access-log", "--log-level", "warning", APP]
    return _started(subprocess.Popen(command, cwd=ROOT, env=env), port)


def _started(process: subprocess.Popen, port: int) -> subprocess.Popen:
    for _ in range(150):
        try:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers={"Host": HOST})
            urllib.request.urlopen(request, timeout=1)
            time.sleep(2)  # every process up, not only the first
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"the server on {port} did not start")


HOST = f"127.0.0.1:{PORT}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--database", default="flowgate_bench_servers")
    parser.add_argument("--redis-db", default="7")
    args = parser.parse_args()

    env = bench_env(args.database, PORT, args.redis_db)
    key = prepare(env, SETUP.replace("SIGNING_SECRET", repr(SIGNING_SECRET))).split()[0]
    processes = [start_gunicorn(env, PORT)]
    cases = {"empty Django view, web process": (f"http://{HOST}/healthz", None)}
    try:
        for offset, (name, worker) in enumerate(SERVERS.items(), start=1):
            processes.append(start_gunicorn_asgi(env, PORT + offset, worker))
            cases[name] = (f"http://127.0.0.1:{PORT + offset}/automation-{key}", "post.lua")
        granian_port = PORT + len(SERVERS) + 1
        processes.append(start_granian(env, granian_port))
        cases["granian (uvloop)"] = (f"http://127.0.0.1:{granian_port}/automation-{key}", "post.lua")
        results = {(name, c): [] for name in cases for c in (4, 32)}
        for round_ in range(args.rounds):
            for connections in (4, 32):
                for name, (url, script) in list(cases.items())[:: 1 if round_ % 2 == 0 else -1]:
                    headers = {"Host": HOST}
                    results[(name, connections)].append(
                        wrk(url, connections=connections, seconds=args.seconds, script=script, headers=headers)
                    )
    finally:
        for process in processes:
            process.terminate()
            process.wait()

    accepted = sum(
        r["requests"] - r["errors"] + r["stopped_requests"] - r["stopped_errors"]
        for (name, _), runs in results.items()
        if not name.startswith("empty")
        for r in runs
    )
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", COUNT, args.database]
    counts = json.loads(subprocess.run(psql, check=True, capture_output=True, text=True).stdout)
    load = os.getloadavg()[0]
    print(f"\n{args.rounds} rounds x {args.seconds} s, median of rounds; load average {load:.2f} at the end")
    print(f"200s answered: {accepted}; delivery rows: {counts['deliveries']}")
    print("| server | connections | req/s | range of rounds | p99 ms | vs empty view | errors | splits | steal % |")
    print("|---|---|---|---|---|---|---|---|---|")
    for connections in (4, 32):
        empty = statistics.median(r["rps"] for r in results[("empty Django view, web process", connections)])
        for name in cases:
            runs = results[(name, connections)]
            rps = statistics.median(r["rps"] for r in runs)
            spread = f"{min(r['rps'] for r in runs):.0f}-{max(r['rps'] for r in runs):.0f}"
            p99 = statistics.median(r["p99_ms"] for r in runs)
            errors = sum(r["errors"] + r["socket_errors"] for r in runs)
            splits = " ".join("/".join(map(str, r["split"])) for r in runs)
            steal = " ".join(f"{r['steal']:.0%}".rstrip("%") for r in runs)
            print(
                f"| {name} | {connections} | {rps:.0f} | {spread} | {p99:.1f} | {rps / empty:.0%} "
                f"| {errors} | {splits} | {steal} |"
            )


if __name__ == "__main__":
    main()
