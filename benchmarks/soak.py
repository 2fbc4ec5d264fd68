"""A mixed run: webhooks, web services, the feed, hosted forms, chat and MCP at once, for ten minutes or an hour.

Run: .venv/bin/python benchmarks/soak.py [--minutes 60] [--scale 1] [--port 8960]
     [--database flowgate_soak] [--redis-db 10]
The service as production runs it (Procfile, docs/operations.md): 2 web
processes of 8 threads, 2 hooks processes, 2 Celery workers and beat, on
PostgreSQL and Redis. Every route is asked at a steady rate of its own
(ROUTES; --scale multiplies them), from clients rotating behind one trusted
proxy so that the low-rate limits count as a crowd's would (the per-form
limit is raised: one form takes every POST here). The checks, each a
failure of the run (exit 1) when broken:
- zero lost: every webhook answered 200 has its delivery row, and every
  delivery ended (done);
- every run ended: none queued, running or retrying once the workers drained;
- no 5xx, no refused connection, and no 429 (the clients rotate);
- each process's RSS at the end within 10% of its RSS after RSS_AT minutes
  (half the run when shorter), the processes found by their ports and
  the workers' names; in a run shorter than PER_PROCESS_MINUTES, each
  service's processes together (a pool process's one-time warm-up is not
  told from a leak in ten minutes).
Reported: per route, requests, statuses, median and p99, beside the
same run's empty view (/healthz on the web process), and each process's
RSS every RSS_EVERY minutes (a leak climbs; a warm-up steps once). .ci/run runs the
ten-minute version at --scale 0.5; the hour is this command with --minutes 60. Latencies
are reported, never asserted: the machine may be shared.
"""

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time

import httpx
from common import PYTHON, ROOT, bench_env, manage, start_gunicorn
from mixed_load import SETUP, TOKEN, Load, counts

PORT = 8960
RSS_AT = 5  # minutes
RSS_EVERY = 5  # minutes between readings of the series printed beside the check
RSS_GROWTH = 0.10
# Shorter runs compare each service's processes together (a master and its workers or pool): in ten minutes a pool
# process may first meet a kind of run after the first reading and grow once to its siblings' size (12% and 9%
# in two runs on 2026-11-28), its warm-up, not a leak; a leak grows them all.
PER_PROCESS_MINUTES = 30


def rss_of(pids: list[int]) -> dict[int, int]:
    """Resident set size in KiB of each process still alive."""
    found = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                found[pid] = int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))
        except (OSError, AttributeError):
            pass
    return found


def tree(root: int) -> list[int]:
    """The process and every descendant (gunicorn's workers, Celery's pool)."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True, check=True).stdout
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        pid, ppid = map(int, line.split())
        children.setdefault(ppid, []).append(pid)
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


async def drive(load: Load, seconds: float, on_rss) -> None:
    # Idle connections are dropped well before the processes' keep-alive (5 s) closes them: a request sent on a
    # connection the server is closing that moment would fail as no real client's retry lets it.
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=64, keepalive_expiry=1.0)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        runner = asyncio.create_task(load.run(client))
        await on_rss(seconds)
        load.stopping.set()
        await runner


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--database", default="flowgate_soak")
    parser.add_argument("--redis-db", default="10")
    parser.add_argument("--apps", type=int, default=2000)
    parser.add_argument("--only", default="", help="comma-separated route name prefixes (the others not asked)")
    args = parser.parse_args()

    port, hooks_port = args.port, args.port + 1
    env = bench_env(args.database, port)
    env.update(
        REDIS_URL=f"redis://127.0.0.1:6379/{args.redis_db}",
        TRUSTED_PROXY_COUNT="1",
        FORM_MIN_FILL_SECONDS="0",
        FORM_RATE_FORM="1000000/h",  # one form takes every POST of the run
        WEB_SERVICE_MONTHLY_QUOTA="100000000",
        LOG_LEVEL="WARNING",
    )
    subprocess.run(["redis-cli", "-n", args.redis_db, "flushdb"], check=True, capture_output=True)
    manage(env, "migrate", "--noinput")
    print(manage(env, "load_demo", "--apps", str(args.apps)).strip().splitlines()[-1])
    urls = json.loads(manage(env, "shell", "-c", SETUP.replace("TOKEN", repr(TOKEN))).strip().splitlines()[-1])
    host = f"127.0.0.1:{port}"
    processes = {
        "web": start_gunicorn(env, port),
        "hooks": start_gunicorn(env, hooks_port, app="config.asgi", asgi=True, host=host),
    }
    concurrency = os.environ.get("WORKER_CONCURRENCY", "2")
    for name in ("worker-1", "worker-2"):
        command = [PYTHON, "-m", "celery", "-A", "config", "worker", "-n", f"{name}@%h"]
        command += ["--concurrency", concurrency, "--loglevel", "WARNING"]
        processes[name] = subprocess.Popen(command, cwd=ROOT, env=env)
    processes["beat"] = subprocess.Popen(
        [PYTHON, "-m", "celery", "-A", "config", "beat", "--loglevel", "WARNING"], cwd=ROOT, env=env
    )
    seconds = args.minutes * 60
    rss_at = min(RSS_AT * 60, seconds / 2)
    early: dict[int, tuple[str, int]] = {}
    late: dict[int, int] = {}

    series: dict[int, list[int | None]] = {}  # each process's RSS every RSS_EVERY minutes from rss_at on

    async def sample(total: float) -> None:
        await asyncio.sleep(rss_at)
        for name, process in processes.items():
            for pid, kib in rss_of(tree(process.pid)).items():
                early[pid], series[pid] = (name, kib), [kib]
        waited = rss_at
        while waited < total:
            step = min(RSS_EVERY * 60, total - waited)
            await asyncio.sleep(step)
            waited += step
            readings = rss_of(list(early))
            for pid in early:
                series[pid].append(readings.get(pid))
        late.update(rss_of(list(early)))

    web, hooks = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{hooks_port}"
    load = Load(web, hooks, urls, args.scale, web_host=host, hooks_host=host)
    if args.only:
        load.keep_only(args.only.split(","))
    problems: list[str] = []
    try:
        started = time.monotonic()
        asyncio.run(drive(load, seconds, sample))
        # Drain: the workers end every run; give up only when a minute passes with nothing more done.
        progress_at, last = time.monotonic(), None
        while time.monotonic() - progress_at < 60:
            found = counts(args.database)
            if found["not_done"] == 0 and found["unended"] == 0:
                break
            if (found["not_done"], found["unended"]) != last:
                progress_at, last = time.monotonic(), (found["not_done"], found["unended"])
            time.sleep(2)
        drained = time.monotonic() - started - seconds
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        for process in processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()

    found = counts(args.database)
    accepted = len(load.accepted)
    if found["deliveries"] < accepted:
        problems.append(f"lost: {accepted} webhooks answered 200, {found['deliveries']} delivery rows")
    if found["not_done"]:
        problems.append(f"{found['not_done']} deliveries did not end done")
    if found["unended"]:
        problems.append(f"{found['unended']} runs did not end")
    if found["twice"] or found["abandoned"]:
        problems.append(f"{found['twice']} webhooks ran twice to success; {found['abandoned']} runs abandoned")
    for route in load.routes.values():
        bad = {status: n for status, n in route.statuses.items() if not status.startswith(("2", "3"))}
        if bad:
            problems.append(f"{route.name}: {bad}")
    for pid, (name, kib) in sorted(early.items()):
        if pid not in late:
            problems.append(f"{name} process {pid} was gone at the end (replaced)")
        elif late[pid] > kib * (1 + RSS_GROWTH) and args.minutes >= PER_PROCESS_MINUTES:
            problems.append(f"{name} process {pid}: RSS {kib} KiB after {rss_at / 60:.0f} min, {late[pid]} at the end")
    if args.minutes < PER_PROCESS_MINUTES:
        for name in processes:
            before = sum(kib for pid, (each, kib) in early.items() if each == name)
            after = sum(late.get(pid, 0) for pid, (each, _) in early.items() if each == name)
            if after > before * (1 + RSS_GROWTH):
                problems.append(f"{name}: RSS {before} KiB after {rss_at / 60:.0f} min, {after} at the end")

    print(f"\n{args.minutes:g} minutes at scale {args.scale:g}; drained {drained:.0f} s after the load stopped")
    print(load.table())
    print(f"\nwebhooks answered 200: {accepted}; delivery rows: {found['deliveries']}; runs: {found['runs']}")
    print(f"RSS (KiB) after {rss_at / 60:.1f} min and at the end:")
    for pid, (name, kib) in sorted(early.items(), key=lambda item: item[1][0]):
        end = late.get(pid)
        growth = f"{(end - kib) / kib:+.1%}" if end else "gone"
        print(f"  {name:<9} {pid:>7} {kib:>9} {end or '-':>9}  {growth}")
    # A leak climbs from reading to reading; a warm-up steps up once and stays.
    print(f"RSS (MiB) every {RSS_EVERY} min from {rss_at / 60:.1f} min on:")
    for pid, (name, _) in sorted(early.items(), key=lambda item: item[1][0]):
        print(f"  {name:<9} {pid:>7}  " + " ".join(f"{kib / 1024:.0f}" if kib else "-" for kib in series[pid]))
    with open("/proc/loadavg") as loadavg:
        print(f"load average at the end (1, 5, 15 min): {' '.join(loadavg.read().split()[:3])}")
    if problems:
        print("\nBROKEN:\n  " + "\n  ".join(problems))
        return 1
    print("\nevery guarantee held: zero lost, every run ended, no 5xx, RSS within 10%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
