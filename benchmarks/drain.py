"""How fast a Celery worker drains a backlog of accepted webhooks.

Run: .venv/bin/python benchmarks/drain.py [--deliveries 4000] [--rounds 2]
Each round stores the backlog straight into a fresh PostgreSQL database (the
same rows the webhook URL stores), queues it as the web processes would (one
hooks.process_deliveries message per hooks.intake.DISPATCH_CHUNK ids), starts a worker of 2 processes
(the Procfile's default) and times it from its start to the last delivery's
run succeeded. It then checks that every delivery ended done with exactly one
run, and that every run succeeded.

It also reports the CPU time (user + system) spent per 1,000 deliveries by the
worker's processes and by the PostgreSQL backends serving them, from the first
delivery done to the last (start-up left out): less sensitive than the rate
to other work on a shared machine.

--chunks 50 200 drains the backlog once per size of message in each round
(in turn, the order reversed every other round): ids a message as the
intake would send them, which a worker takes hooks.tasks.TAKEN at a time.
A size written 200:100 also sets the worker's TAKEN to 100 for that drain
(the ids it runs of a message before it shares out the rest).

--fan-out 10 adds, in each round after the single-automation drain, the drain
of the same number of deliveries to a connection's URL (docs/connections.md)
with ten automations listening on it: each delivery fanned out to ten runs.
It reports deliveries and runs per second beside the single-automation drain,
and checks that every delivery ended done and every automation ran each one
exactly once.
"""

import argparse
import os
import subprocess
import time

from common import PYTHON, ROOT, bench_env, manage, prepare

SETUP = """
from django.contrib.auth import get_user_model
from automations import services
from hooks import intake, statements
user = get_user_model().objects.create_user("bench")
automation = services.create_automation(owner=user, name="bench", enabled=True, definition={
    "trigger": {"type": "webhook"}, "settings": {"suppress_duplicates": True},
    "steps": [{"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}},
              {"id": "check", "kind": "condition", "all": [{"left": "{{steps.v.n}}", "op": "exists"}]}]})
rows = [intake.Accepted(automation_id=automation.pk, method="POST", path="/", query_string="",
                        content_type="application/json", body=b'{"n": %d}' % n, body_digest=f"{n:064d}")
        for n in range(COUNT)]
for start in range(0, len(rows), 200):
    statements.insert_deliveries(rows[start:start + 200])
print(" ".join(str(row.pk) for row in rows))
"""
FAN_OUT_SETUP = """
from django.contrib.auth import get_user_model
from automations import services
from catalog.models import App, Operation
from connections import services as connection_services
from hooks import intake, statements
user = get_user_model().objects.create_user("bench")
app = App.objects.create(slug="bench-crm", name="Bench CRM", auth_type="none", app_domain="bench.example")
Operation.objects.create(app=app, kind="trigger", key="new_lead", name="New lead", delivery_mode="per_connection")
connection = connection_services.connect(owner=user, app=app, label="bench")
for n in range(AUTOMATIONS):
    services.create_automation(owner=user, name=f"bench {n}", enabled=True, definition={
        "trigger": {"type": "app_trigger", "app": "bench-crm", "trigger": "new_lead", "connection": connection.pk},
        "settings": {"suppress_duplicates": True},
        "steps": [{"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}},
                  {"id": "check", "kind": "condition", "all": [{"left": "{{steps.v.n}}", "op": "exists"}]}]})
rows = [intake.Accepted(automation_id=None, connection_id=connection.pk, method="POST", path="/", query_string="",
                        content_type="application/json", body=b'{"n": %d}' % n, body_digest=f"{n:064d}")
        for n in range(COUNT)]
for start in range(0, len(rows), 200):
    statements.insert_deliveries(rows[start:start + 200])
print(" ".join(str(row.pk) for row in rows))
"""
FAN_OUT_COUNT = """
SELECT (SELECT count(*) FROM hooks_delivery WHERE automation_id IS NULL AND status = 'done'),
       (SELECT count(*) FROM hooks_delivery WHERE automation_id IS NULL),
       (SELECT count(*) FROM automations_run WHERE status = 'succeeded'),
       (SELECT count(*) FROM automations_run),
       (SELECT count(*) FROM (SELECT DISTINCT automation_id, trigger FROM automations_run) once)
"""
COUNT = """
SELECT count(*) FILTER (WHERE d.status = 'done'), count(*), count(DISTINCT r.id) FILTER (WHERE r.status = 'succeeded'),
       (SELECT count(*) FROM automations_run)
FROM hooks_delivery d LEFT JOIN automations_run r ON r.id = d.run_id
"""


def drain_once(
    deliveries: int, fan_out: int = 0, chunk: int | None = None, taken: int | None = None
) -> tuple[float, float, float]:
    """Seconds to drain, and the worker's and PostgreSQL's CPU seconds per 1,000 deliveries; fan_out: to a
    connection's URL with that many automations listening, instead of one automation's URL; chunk: ids a message
    (the intake's DISPATCH_CHUNK when None); taken: the worker's hooks.tasks.TAKEN (the code's when None)."""
    env = bench_env("flowgate_bench_drain", 8934)
    setup = FAN_OUT_SETUP.replace("AUTOMATIONS", str(fan_out)) if fan_out else SETUP
    ids = [int(pk) for pk in prepare(env, setup.replace("COUNT", str(deliveries))).split()]
    queue = (
        f"from hooks import intake, tasks; ids = {ids}; chunk = {chunk} or intake.DISPATCH_CHUNK\n"
        "for s in range(0, len(ids), chunk): tasks.process_deliveries.delay(ids[s:s + chunk])"
    )
    manage(env, "shell", "-c", queue)
    started = time.monotonic()
    arguments = ["-A", "config", "worker", "--concurrency", "2", "--loglevel", "WARNING"]
    command = [PYTHON, "-m", "celery", *arguments]
    if taken is not None:  # set before the pool forks, so that every pool process has it
        start = "import sys; from celery.__main__ import main; import hooks.tasks; "
        start += f"hooks.tasks.TAKEN = {taken}; sys.argv = ['celery', *sys.argv[1:]]; main()"
        command = [PYTHON, "-c", start, *arguments]
    worker = subprocess.Popen(command, cwd=ROOT, env=env)
    first = None
    try:
        while True:
            if fan_out:
                done, total, succeeded, runs, once = _count(FAN_OUT_COUNT)
                succeeded //= fan_out  # deliveries' worth of runs
            else:
                done, total, succeeded, runs = _count()
            if succeeded == total:
                elapsed = time.monotonic() - started
                last = (succeeded, _cpu_seconds(_family(worker.pid)), _cpu_seconds(_backends()))
                break
            if succeeded and first is None:
                first = (succeeded, _cpu_seconds(_family(worker.pid)), _cpu_seconds(_backends()))
            time.sleep(0.2)
    finally:
        worker.terminate()
        worker.wait()
    if fan_out:  # every delivery done; each of the automations ran each delivery exactly once
        assert (done, runs, once) == (deliveries, deliveries * fan_out, deliveries * fan_out), (done, runs, once)
    else:
        assert (done, succeeded, runs) == (deliveries, deliveries, deliveries), (done, succeeded, runs)
    first = first or (0, 0.0, 0.0)
    per_thousand = 1000 / max(last[0] - first[0], 1)
    return elapsed, (last[1] - first[1]) * per_thousand, (last[2] - first[2]) * per_thousand


def _family(pid: int) -> list[int]:
    """The process and its children (the worker's pool)."""
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        children.append(int(entry))
            except (OSError, IndexError):
                continue  # gone meanwhile
    return [pid, *children]


def _backends() -> list[int]:
    """The PostgreSQL backends connected to the benchmark's database, other than this query's own."""
    query = (
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
        "AND backend_type = 'client backend'"
    )
    out = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", query, "flowgate_bench_drain"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [int(pid) for pid in out.split()]


def _cpu_seconds(pids: list[int]) -> float:
    """User and system CPU seconds these processes have used so far (on this machine: PostgreSQL is local)."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _count(query: str = COUNT) -> list[int]:
    out = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", query, "flowgate_bench_drain"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [int(n) for n in out.strip().split("|")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deliveries", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--fan-out", type=int, default=0, help="also drain to a connection with this many automations")
    parser.add_argument(
        "--chunks", nargs="+", help="ids a message[:the worker's TAKEN], one drain each (default: the intake's)"
    )
    args = parser.parse_args()
    if args.chunks:
        for round_ in range(args.rounds):
            for case in args.chunks[:: 1 if round_ % 2 == 0 else -1]:
                chunk, _, taken = case.partition(":")
                elapsed, worker_cpu, database_cpu = drain_once(
                    args.deliveries, chunk=int(chunk), taken=int(taken) if taken else None
                )
                label = f"{chunk} ids a message" + (f" (the worker taking {taken})" if taken else "")
                print(
                    f"{label}: {args.deliveries} deliveries drained in {elapsed:.1f} s: "
                    f"{args.deliveries / elapsed:.0f}/s; CPU s per 1,000: worker {worker_cpu:.2f}, "
                    f"PostgreSQL {database_cpu:.2f}",
                    flush=True,
                )
        return
    for _ in range(args.rounds):
        if args.fan_out:
            single, _, _ = drain_once(args.deliveries)
            fanned, worker_cpu, database_cpu = drain_once(args.deliveries, args.fan_out)
            print(
                f"{args.deliveries} deliveries: to one automation in {single:.1f} s "
                f"({args.deliveries / single:.0f}/s); "
                f"fanned out to {args.fan_out} automations each in {fanned:.1f} s ({args.deliveries / fanned:.0f} "
                f"deliveries/s, {args.deliveries * args.fan_out / fanned:.0f} runs/s); every automation ran each "
                f"once; fan-out CPU s per 1,000 deliveries: worker {worker_cpu:.2f}, PostgreSQL {database_cpu:.2f}",
                flush=True,
            )
            continue
        elapsed, worker_cpu, database_cpu = drain_once(args.deliveries)
        print(
            f"{args.deliveries} deliveries drained in {elapsed:.1f} s: {args.deliveries / elapsed:.0f}/s "
            f"({os.cpu_count()} cores, worker of 2 processes); each done with one succeeded run; "
            f"CPU s per 1,000: worker {worker_cpu:.2f}, PostgreSQL {database_cpu:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
