"""Faults during a webhook load, measured from outside: what each does to senders, and that nothing is lost.

Run: .venv/bin/python benchmarks/faults.py [--rate 200] [--only NAME ...] [--port 19200] [--disk-mb 256] [--wal-mb 192]
(as root: it mounts a tmpfs for each disk-full fault and runs PostgreSQL as the postgres user).

It starts a PostgreSQL cluster and a redis-server of its own (benchmarks/clusters.py), so that
stopping them touches no one else's, migrates, and runs the service as the Procfile does: a web
process and a hooks process (gunicorn, 2 processes each), a Celery worker (2 pool processes) and
beat. Webhooks go to the hooks process at a steady --rate from an asyncio client, each body with
an id of its own; the web process is asked /healthz 20 times a second. Before each fault, delayed
runs are started (a 10 s delay step) so that runs wait while it hits. Then the faults, one after
another, each with its load before, during and after:

  worker      SIGKILL of a Celery pool process in the middle of runs (the worker's main process replaces it)
  hooks       SIGKILL of a hooks process (gunicorn's master replaces it)
  web         SIGKILL of a web process (gunicorn's master replaces it)
  redis       Redis killed and started again, empty: every queued message is lost
  postgres    PostgreSQL restarted (pg_ctl restart -m fast)
  refused     PostgreSQL stopped for 30 s: every connection refused
  disk-full   the file system of the database's tables full for 15 s (a tmpfs; needs `mount`)
  wal-full    the file system of the database's WAL full for 15 s (a tmpfs): PostgreSQL stops with a PANIC
              and, Debian's unit restarting nothing, stays down until the space is freed and it is started again

After each, checked from the database once the queue has drained: every id that got a 200 has
exactly one successful run (lost = 0, duplicates = 0); no answer was a 500, and every 503 has
Retry-After and came while the database could not commit; every delayed run went on once; the
web and hooks processes answer again from as many processes as before, with nothing restarted
by this script; no "Internal Server Error" in their logs. It prints a table and exits 1 when a
guarantee broke. The sweeps are shortened (RUN_SWEEP_SECONDS=1, DELIVERY_SWEEP_SECONDS=2,
RUN_LEASE_SECONDS=20) so that recovery is seen within seconds; production's defaults are
15, 30 and 300 s.
"""

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
from clusters import PrivatePostgres, PrivateRedis
from common import PYTHON, ROOT, manage

DELAY_SECONDS = 10
WAITING_PER_FAULT = 10
SETUP = """
from django.contrib.auth import get_user_model
from automations import services
user = get_user_model().objects.create_user("faults")
load = services.create_automation(owner=user, name="load", enabled=True, definition={
    "trigger": {"type": "webhook"}, "settings": {"suppress_duplicates": False},
    "steps": [{"id": "v", "kind": "set_values", "values": {"id": "{{trigger.body.id}}"}}]})
waits = services.create_automation(owner=user, name="waits", enabled=True, definition={
    "trigger": {"type": "webhook"}, "settings": {"suppress_duplicates": False},
    "steps": [{"id": "pause", "kind": "delay", "seconds": DELAY},
              {"id": "after", "kind": "set_values", "values": {"id": "{{trigger.body.id}}"}}]})
print(load.pk, services.hook_url(load).rsplit("automation-", 1)[1],
      waits.pk, services.hook_url(waits).rsplit("automation-", 1)[1])
"""
FAULTS = ["worker", "hooks", "web", "redis", "postgres", "refused", "disk-full", "wal-full"]
DATABASE_FAULTS = {"postgres", "refused", "disk-full", "wal-full"}  # 503s are expected only during these
KILLS = {"hooks", "web"}  # a connection cut mid-request is expected only here
OUTAGE_LINE = "the database cannot be reached"
BACK_LINE = "the database answers again"


class Service:
    """The four kinds of process as the Procfile runs them, each in a session of its own, logging to a file."""

    def __init__(self, env: dict, logs: Path, web_port: int, hooks_port: int):
        self.env, self.logs, self.web_port, self.hooks_port = env, logs, web_port, hooks_port
        self.processes: dict[str, subprocess.Popen] = {}

    def start(self) -> None:
        gunicorn = [PYTHON, "-m", "gunicorn", "-c", "edge/gunicorn.py", "--workers", "2", "--log-level", "warning"]
        self._start("web", *gunicorn, "config.wsgi", "--bind", f"127.0.0.1:{self.web_port}", "--threads", "8")
        hooks = ["config.asgi", "-k", "edge.asgi_worker.Worker", "--bind", f"127.0.0.1:{self.hooks_port}"]
        self._start("hooks", *gunicorn, *hooks)
        celery = [PYTHON, "-m", "celery", "-A", "config"]
        self._start("worker", *celery, "worker", "--loglevel", "INFO", "--concurrency", "2", "--without-gossip")
        self._start("beat", *celery, "beat", "--loglevel", "INFO", "--schedule", str(self.logs / "beat-schedule"))
        for port in (self.web_port, self.hooks_port):
            wait(lambda port=port: listeners(port) == 2, 60, f"2 processes listening on {port}")
        # A pool process killed while the worker boots stops the whole worker (Celery's "Could not start worker
        # processes"): the faults begin once it is ready.
        wait(lambda: " ready." in self.log("worker"), 60, "the worker to be ready")
        wait(lambda: "beat: Starting" in self.log("beat"), 60, "beat to start")

    def _start(self, name: str, *command: str) -> None:
        with open(self.logs / f"{name}.log", "ab") as log:
            self.processes[name] = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def children(self, name: str) -> list[int]:
        """The pids of the process's children: gunicorn's workers, Celery's pool."""
        out = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(self.processes[name].pid)], capture_output=True, text=True
        ).stdout
        return [int(pid) for pid in out.split()]

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def alive(self) -> list[str]:
        return [name for name, process in self.processes.items() if process.poll() is None]

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def listeners(port: int) -> int:
    """Processes listening on the port: each gunicorn worker binds a socket of its own (edge/gunicorn.py)."""
    out = subprocess.run(["ss", "-tlnH", f"( sport = :{port} )"], capture_output=True, text=True).stdout
    return len(out.splitlines())


def wait(predicate, timeout: float, what: str) -> float:
    """Seconds until predicate() held; raises after timeout."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.2)
    raise TimeoutError(f"{what}: not after {timeout:.0f} s")


class Load:
    """POSTs at a steady rate over a pool of keep-alive connections, each answer recorded with its id and time."""

    def __init__(self, port: int, path: str, rate: float, *, connections: int = 48, body: bool = True):
        self.port, self.path, self.rate, self.connections, self.body = port, path, rate, connections, body
        self.answers: list[dict] = []
        self.running = False

    async def run(self, stop: asyncio.Event) -> None:
        queue: asyncio.Queue = asyncio.Queue()
        clients = [asyncio.create_task(self._client(queue)) for _ in range(self.connections)]
        start, sent = time.monotonic(), 0
        while not stop.is_set():
            due = start + sent / self.rate
            if (pause := due - time.monotonic()) > 0:
                await asyncio.sleep(pause)
            queue.put_nowait(str(uuid.uuid4()))
            sent += 1
        await queue.join()
        for client in clients:
            client.cancel()

    async def _client(self, queue: asyncio.Queue) -> None:
        reader = writer = None
        while True:
            ident = await queue.get()
            answer = {"id": ident, "sent": time.monotonic(), "status": None, "retry_after": None, "error": None}
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                answer["status"], headers = await asyncio.wait_for(self._exchange(reader, writer, ident), 30)
                answer["retry_after"] = headers.get("retry-after")
                if headers.get("connection", "").lower() == "close":
                    writer.close()
                    reader = writer = None
            except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as error:
                answer["error"] = type(error).__name__
                if writer is not None:
                    writer.close()
                reader = writer = None
            answer["answered"] = time.monotonic()
            self.answers.append(answer)
            queue.task_done()

    async def _exchange(self, reader, writer, ident: str) -> tuple[int, dict]:
        host = f"127.0.0.1:{self.port}"
        if self.body:
            body = json.dumps({"id": ident}).encode()
            head = f"POST {self.path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        else:
            writer.write(f"GET {self.path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        await writer.drain()
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        await reader.readexactly(int(headers.get("content-length", "0")))
        return status, headers


class Faults:
    def __init__(self, args, folder: Path):
        self.args = args
        self.folder = folder
        port = args.port
        self.postgres = PrivatePostgres(port, disk_mb=args.disk_mb, wal_mb=args.wal_mb)
        self.redis = PrivateRedis(port + 1)
        self.web_port, self.hooks_port = port + 2, port + 3
        self.service: Service | None = None
        self.results: list[dict] = []

    def start(self) -> None:
        """The cluster, Redis, the database's tables and automations, then the service's processes."""
        self.postgres.start()
        self.postgres.create_database("flowgate_faults")
        self.redis.start()
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "faults-only-secret-key-of-some-length-000000000000",
            "URL_KEY_SECRET": "faults-only-url-key-secret",
            "CONNECTION_KEYS": "ZmF1bHRzLW9ubHktY29ubmVjdGlvbi1rZXktMDAwMDA=",
            "DATABASE_URL": self.postgres.url("flowgate_faults"),
            "REDIS_URL": self.redis.url,
            "BASE_URL": f"http://127.0.0.1:{self.web_port}",
            "HOOKS_URL": f"http://127.0.0.1:{self.hooks_port}",
            "LOG_LEVEL": "WARNING",
            "FLOWGATE_VAR_DIR": str(self.folder / "var"),
            "RUN_SWEEP_SECONDS": "1",
            "DELIVERY_SWEEP_SECONDS": "2",
            "RUN_LEASE_SECONDS": "20",
        }
        manage(self.env, "migrate", "--noinput")
        setup = SETUP.replace("DELAY", str(DELAY_SECONDS))
        out = manage(self.env, "shell", "-c", setup).split()
        self.load_id, load_key, self.waits_id, waits_key = int(out[-4]), out[-3], int(out[-2]), out[-1]
        self.load_path, self.waits_path = f"/automation-{load_key}", f"/automation-{waits_key}"
        self.service = Service(self.env, self.folder, self.web_port, self.hooks_port)
        self.service.start()

    def database(self):
        return psycopg.connect(self.postgres.url("flowgate_faults"), autocommit=True)

    # The faults: each returns when the thing it broke is back (or, for a killed process, at once).

    def fault_worker(self) -> None:
        pool = self.service.children("worker")
        os.kill(pool[0], signal.SIGKILL)

    def fault_hooks(self) -> None:
        os.kill(self.service.children("hooks")[0], signal.SIGKILL)

    def fault_web(self) -> None:
        os.kill(self.service.children("web")[0], signal.SIGKILL)

    def fault_redis(self) -> None:
        self.redis.kill()
        time.sleep(5)
        self.redis.start()

    def fault_postgres(self) -> None:
        self.postgres.stop("fast")
        self.postgres.start()

    def fault_refused(self) -> None:
        self.postgres.stop("fast")
        time.sleep(30)
        self.postgres.start()

    def fault_disk_full(self) -> None:
        self.postgres.fill_disk()
        time.sleep(15)
        self.postgres.free_disk()

    def fault_wal_full(self) -> str:
        """The operator's part after a WAL disk full: space freed, then PostgreSQL started if it stopped."""
        log = self.postgres.log_size()
        self.postgres.fill_wal()
        time.sleep(15)
        self.postgres.free_wal()
        panicked = self.postgres.panicked_since(log)
        if not panicked:
            return "no PANIC: PostgreSQL never needed a new WAL segment while the disk was full"
        wait(lambda: self.postgres.stopped() or self.postgres.running(), 60, "PostgreSQL to stop or answer")
        if self.postgres.running():
            return "PostgreSQL PANICked and recovered by itself"
        self.postgres.start()
        return "PostgreSQL PANICked and stopped itself; started again once the space was freed"

    async def measure(self, name: str) -> dict:
        """The fault under load: load before, the fault, load until answers are 200s again, then the checks."""
        hooks_load = Load(self.hooks_port, self.load_path, self.args.rate)
        web_load = Load(self.web_port, "/healthz", 20, connections=4, body=False)
        waits = Load(self.hooks_port, self.waits_path, WAITING_PER_FAULT, connections=2)
        logs = {process: len(self.service.log(process)) for process in ("web", "hooks", "worker", "beat")}
        stop, stop_waits = asyncio.Event(), asyncio.Event()
        tasks = [asyncio.create_task(load.run(stop)) for load in (hooks_load, web_load)]
        waiting = asyncio.create_task(waits.run(stop_waits))
        await asyncio.sleep(1)
        stop_waits.set()
        await waiting
        await asyncio.sleep(2)
        began = time.monotonic()
        note = await asyncio.to_thread(getattr(self, "fault_" + name.replace("-", "_")))
        ended = time.monotonic()
        # Load goes on until the hooks process has stored webhooks again for 3 s, and every process listens.
        deadline = ended + 120
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            recent = [a for a in hooks_load.answers if a["sent"] > time.monotonic() - 3]
            back = recent and all(a["status"] == 200 for a in recent) and time.monotonic() - ended > 3
            if back and listeners(self.web_port) == 2 and listeners(self.hooks_port) == 2:
                break
        stop.set()
        await asyncio.gather(*tasks)
        result = {**self.check(name, hooks_load, web_load, waits, began, ended, logs), "note": note}
        if note and note.startswith("no PANIC"):
            result["broken"].append("the fault did not happen: " + note)
        return result

    def check(self, name, hooks_load, web_load, waits, began, ended, logs) -> dict:
        answers = hooks_load.answers
        accepted = [a["id"] for a in answers if a["status"] == 200]
        waited = [a["id"] for a in waits.answers if a["status"] == 200]
        broken: list[str] = []
        settled_in = None
        try:
            settled_in = wait(lambda: self.settled(accepted, waited), 180, "every accepted webhook to run")
        except TimeoutError as error:
            broken.append(str(error))
        runs = self.runs(self.load_id, accepted)
        lost = sum(1 for ident in accepted if runs.get(ident, 0) == 0)
        duplicates = sum(1 for ident in accepted if runs.get(ident, 0) > 1)
        resumed = self.runs(self.waits_id, waited, resumed=True)
        waits_wrong = sum(1 for ident in waited if resumed.get(ident, 0) != 1)
        statuses: dict[str, int] = {}
        for answer in answers:
            key = str(answer["status"] or answer["error"])
            statuses[key] = statuses.get(key, 0) + 1
        unavailable = [a for a in answers if a["status"] == 503]
        window = max(a["answered"] for a in unavailable) - min(a["sent"] for a in unavailable) if unavailable else 0
        first_back = [a["answered"] for a in answers if a["status"] == 200 and a["sent"] >= ended]
        recovery = (min(first_back) - ended) if first_back else None
        web_statuses: dict[str, int] = {}
        for answer in web_load.answers:
            key = str(answer["status"] or answer["error"])
            web_statuses[key] = web_statuses.get(key, 0) + 1
        new_logs = {process: self.service.log(process)[start:] for process, start in logs.items()}
        errors_logged = sum(new_logs[p].count("Internal Server Error") for p in ("web", "hooks"))
        outage_lines = sum(new_logs[p].count(OUTAGE_LINE) for p in ("web", "hooks"))
        tracebacks = {p: new_logs[p].count("Traceback (most recent call last)") for p in new_logs}
        if lost:
            broken.append(f"{lost} accepted webhooks have no successful run")
        if duplicates:
            broken.append(f"{duplicates} accepted webhooks ran more than once")
        if waits_wrong:
            broken.append(f"{waits_wrong} of {len(waited)} delayed runs did not go on exactly once")
        if len(waited) < WAITING_PER_FAULT - 1:
            broken.append(f"only {len(waited)} delayed runs were started before the fault")
        odd = {s: n for s, n in statuses.items() if s not in ("200", "503")}
        if name not in KILLS and odd:
            broken.append(f"answers other than 200 and 503: {odd}")
        if name in KILLS and any(s.isdigit() for s in odd):
            broken.append(f"answers other than 200 and 503: {odd}")
        if any(a["retry_after"] is None for a in unavailable):
            broken.append("a 503 without Retry-After")
        if unavailable and name not in DATABASE_FAULTS:
            broken.append(f"{len(unavailable)} answers of 503 while the database was up")
        if errors_logged:
            broken.append(f"{errors_logged} 'Internal Server Error' lines in the web and hooks logs")
        if any(s != "200" for s in web_statuses if s.isdigit()):
            broken.append(f"the web process answered /healthz {web_statuses}")
        if sorted(self.service.alive()) != sorted(self.service.processes):
            broken.append(f"processes gone: {set(self.service.processes) - set(self.service.alive())}")
        for port, what in ((self.web_port, "web"), (self.hooks_port, "hooks")):
            if listeners(port) != 2:
                broken.append(f"{what}: {listeners(port)} processes listen, not 2")
        return {
            "fault": name,
            "seconds": round(ended - began, 1),
            "sent": len(answers),
            "statuses": statuses,
            "window_503": round(window, 1),
            "recovery": None if recovery is None else round(recovery, 2),
            "lost": lost,
            "duplicates": duplicates,
            "waiting": f"{len(waited) - waits_wrong}/{len(waited)}",
            "settled": None if settled_in is None else round(settled_in, 1),
            "web": web_statuses,
            "outage_lines": outage_lines,
            "tracebacks": tracebacks,
            "broken": broken,
        }

    def runs(self, automation_id: int, ids: list[str], *, resumed: bool = False) -> dict[str, int]:
        """Successful runs per id; resumed: only those whose delay step finished once and the step after it ran."""
        query = (
            "SELECT trigger->'body'->>'id', steps FROM automations_run"
            " WHERE automation_id = %s AND status = 'succeeded' AND trigger->'body'->>'id' = ANY(%s)"
        )
        counts: dict[str, int] = {}
        with self.database() as connection:
            for ident, steps in connection.execute(query, (automation_id, ids)):
                if resumed and [s.get("id") for s in steps] != ["pause", "after"]:
                    continue
                counts[ident] = counts.get(ident, 0) + 1
        return counts

    def settled(self, accepted: list[str], waited: list[str]) -> bool:
        try:
            with self.database() as connection:
                pending = connection.execute(
                    "SELECT count(*) FROM hooks_delivery WHERE status = 'pending'"
                    " OR run_id IN (SELECT id FROM automations_run WHERE status IN ('running', 'waiting'))"
                ).fetchone()[0]
        except psycopg.OperationalError:
            return False
        return pending == 0 and len(self.runs(self.load_id, accepted)) == len(set(accepted))

    def close(self) -> None:
        if self.service is not None:
            self.service.stop()
        self.redis.destroy()
        self.postgres.destroy()


def report(results: list[dict], rate: float) -> None:
    print(f"\nFaults under {rate:.0f} webhooks a second (hooks process), {WAITING_PER_FAULT} delayed runs each:\n")
    print(
        "| fault | lasted s | sent | answers | 503 window s | back in s | lost | duplicates | waiting runs went on "
        "once | settled in s | outage log lines | web /healthz | broken |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        answers = ", ".join(f"{s}: {n}" for s, n in sorted(r["statuses"].items()))
        web = ", ".join(f"{s}: {n}" for s, n in sorted(r["web"].items()))
        print(
            f"| {r['fault']} | {r['seconds']} | {r['sent']} | {answers} | {r['window_503']} | {r['recovery']} "
            f"| {r['lost']} | {r['duplicates']} | {r['waiting']} | {r['settled']} | {r['outage_lines']} | {web} "
            f"| {'; '.join(r['broken']) or 'none'} |"
        )
    print("\nTracebacks logged during each fault (web, hooks, worker, beat):")
    for r in results:
        print(f"- {r['fault']}: {r['tracebacks']}" + (f"; {r['note']}" if r["note"] else ""))


async def main_async(args) -> int:
    folder = Path(tempfile.mkdtemp(prefix="flowgate-faults-"))
    faults = Faults(args, folder)
    results, skipped = [], []
    try:
        faults.start()
        for name in args.only or FAULTS:
            if name == "disk-full" and not faults.postgres.can_fill:
                skipped.append("disk-full: not measured, no tmpfs could be mounted on this machine")
                continue
            if name == "wal-full" and not faults.postgres.can_fill_wal:
                skipped.append("wal-full: not measured, no tmpfs could be mounted on this machine")
                continue
            print(f"fault: {name} ...", file=sys.stderr, flush=True)
            result = await faults.measure(name)
            print(json.dumps(result), file=sys.stderr, flush=True)
            results.append(result)
    finally:
        faults.close()
    report(results, args.rate)
    for line in skipped:
        print(f"\n{line}")
    print(f"\nLogs: {folder}")
    return 1 if any(r["broken"] for r in results) else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=float, default=200, help="webhooks a second")
    parser.add_argument("--only", action="append", choices=FAULTS, help="this fault only (repeatable)")
    parser.add_argument("--port", type=int, default=19200, help="PostgreSQL's; Redis, web and hooks take the next 3")
    parser.add_argument("--disk-mb", type=int, default=256, help="the tmpfs of the database's tables; 0: no disk-full")
    parser.add_argument("--wal-mb", type=int, default=192, help="the tmpfs of the database's WAL; 0: no wal-full")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: the cluster runs as the postgres user; disk-full and wal-full mount a tmpfs each")
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
