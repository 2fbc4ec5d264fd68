"""How fast a Celery worker drains a backlog of accepted webhooks.

Run: .venv/bin/python benchmarks/drain.py [--deliveries 4000] [--rounds 2]
Each round stores the backlog straight into a fresh PostgreSQL database (the
same rows the webhook URL stores), queues it as the web processes would (one
hooks.process_deliveries message per 50 ids), starts a worker of 2 processes
(the Procfile's default) and times it from its start to the last delivery
done. It then checks that every delivery ended done with exactly one run, and
that every run succeeded.
"""

import argparse
import os
import subprocess
import time

from common import PYTHON, ROOT, bench_env, manage

SETUP = """
from django.contrib.auth import get_user_model
from automations import services
from hooks import intake
user = get_user_model().objects.create_user("bench")
automation = services.create_automation(owner=user, name="bench", enabled=True, definition={
    "trigger": {"type": "webhook"}, "settings": {"suppress_duplicates": True},
    "steps": [{"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}},
              {"id": "check", "kind": "condition", "all": [{"left": "{{steps.v.n}}", "op": "exists"}]}]})
rows = [intake.Accepted(automation_id=automation.pk, method="POST", path="/", query_string="",
                        content_type="application/json", body=b'{"n": %d}' % n, body_digest=f"{n:064d}")
        for n in range(COUNT)]
for start in range(0, len(rows), 200):
    intake.insert(rows[start:start + 200])
print(" ".join(str(row.pk) for row in rows))
"""
COUNT = """
SELECT count(*) FILTER (WHERE d.status = 'done'), count(*), count(DISTINCT r.id) FILTER (WHERE r.status = 'succeeded'),
       (SELECT count(*) FROM automations_run)
FROM hooks_delivery d LEFT JOIN automations_run r ON r.id = d.run_id
"""


def drain_once(deliveries: int) -> float:
    env = bench_env("flowgate_bench_drain", 8934)
    subprocess.run(["redis-cli", "-n", "2", "flushdb"], check=True, capture_output=True)
    manage(env, "migrate", "--noinput")
    made = manage(env, "shell", "-c", SETUP.replace("COUNT", str(deliveries)))
    ids = [int(pk) for pk in made.strip().splitlines()[-1].split()]
    subprocess.run(["redis-cli", "-n", "2", "flushdb"], check=True, capture_output=True)  # the replay queued on turn-on
    queue = (
        f"from hooks import tasks; ids = {ids}\n"
        "for s in range(0, len(ids), 50): tasks.process_deliveries.delay(ids[s:s + 50])"
    )
    manage(env, "shell", "-c", queue)
    started = time.monotonic()
    command = [PYTHON, "-m", "celery", "-A", "config", "worker", "--concurrency", "2", "--loglevel", "WARNING"]
    worker = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        while True:
            done, total, succeeded, runs = _count()
            if done == total:
                elapsed = time.monotonic() - started
                break
            time.sleep(0.2)
    finally:
        worker.terminate()
        worker.wait()
    assert (done, succeeded, runs) == (deliveries, deliveries, deliveries), (done, succeeded, runs)
    return elapsed


def _count() -> list[int]:
    out = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", COUNT, "flowgate_bench_drain"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [int(n) for n in out.strip().split("|")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deliveries", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    for _ in range(args.rounds):
        elapsed = drain_once(args.deliveries)
        print(
            f"{args.deliveries} deliveries drained in {elapsed:.1f} s: {args.deliveries / elapsed:.0f}/s "
            f"({os.cpu_count()} cores, worker of 2 processes); each done with one succeeded run",
            flush=True,
        )


if __name__ == "__main__":
    main()
