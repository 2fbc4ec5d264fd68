"""An owner's runs pages with 100,000 runs of one automation, beside an empty Django view (docs/accounts.md).

Run: .venv/bin/python benchmarks/account_runs.py [--runs 100000] [--seconds 10] [--rounds 3] [--connections 4]
     [--port 8934] [--database flowgate_bench_account] [--redis-db 2]
Cases, on the same gunicorn, PostgreSQL and Redis, signed in as the owner:
the empty view (/healthz), the first page of runs, a page halfway down
(?before= the 50,000th run: keyset, so as cheap as the first), one run's
page, and the list of the owner's automations (each with its latest run).
Goal: every page's median and p99 reported; a deep page as fast as the
first.
"""

import argparse
import subprocess

from common import EMPTY, bench_env, interleaved, manage, print_table, start_gunicorn

PORT = 8934
SETUP = """
import random
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from automations import services
from automations.models import Run
user = get_user_model().objects.create_user("bench")
automation = services.create_automation(owner=user, name="Busy", enabled=True, definition={
    "trigger": {"type": "webhook"}, "steps": [{"id": "who", "kind": "set_values", "values": {"email": "x"}}]})
for n in range(5):
    services.create_automation(owner=user, name=f"Other {n}", definition={"trigger": {"type": "webhook"}, "steps": []})
start = timezone.now() - timedelta(days=30)
statuses = ["succeeded"] * 8 + ["failed", "stopped"]
batch = []
for n in range(RUNS):
    batch.append(Run(automation=automation, source="webhook", status=random.choice(statuses),
        trigger={"body": {"order": n, "email": f"a{n}@example.com"}},
        steps=[{"id": "who", "kind": "set_values", "status": "succeeded", "output": {"email": "x"}}]))
    if len(batch) == 5000:
        Run.objects.bulk_create(batch)
        batch = []
Run.objects.bulk_create(batch)
ids = list(Run.objects.filter(automation=automation).order_by("pk").values_list("pk", flat=True))
# Spread over a month, in id order, as they would have come.
for offset in range(0, len(ids), 5000):
    chunk = ids[offset:offset + 5000]
    Run.objects.filter(pk__in=chunk).update(started_at=start + timedelta(seconds=offset * 20))
client = Client()
client.force_login(user)
print(automation.pk, ids[len(ids) // 2], ids[-1], client.cookies["sessionid"].value)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--database", default="flowgate_bench_account")
    parser.add_argument("--redis-db", default="2")
    args = parser.parse_args()

    env = bench_env(args.database, args.port)
    env["REDIS_URL"] = f"redis://127.0.0.1:6379/{args.redis_db}"
    subprocess.run(["redis-cli", "-n", args.redis_db, "flushdb"], check=True, capture_output=True)
    manage(env, "migrate", "--noinput")
    printed = manage(env, "shell", "-c", SETUP.replace("RUNS", str(args.runs))).strip().splitlines()[-1]
    automation_id, middle_run, last_run, session = printed.split()
    manage(env, "dbshell", "--", "-c", "VACUUM ANALYZE")
    server = start_gunicorn(env, args.port)
    try:
        base = f"http://127.0.0.1:{args.port}"
        shared = {
            "connections": args.connections,
            "seconds": args.seconds,
            "headers": {"Cookie": f"sessionid={session}"},
        }
        runs = f"{base}/account/automations/{automation_id}/runs"
        cases = {
            EMPTY: {"url": f"{base}/healthz", **shared},
            "runs, first page": {"url": runs, **shared},
            "runs, halfway down (?before=)": {"url": f"{runs}?before={middle_run}", **shared},
            "one run": {"url": f"{base}/account/runs/{last_run}", **shared},
            "your automations (6, latest run each)": {"url": f"{base}/account/", **shared},
        }
        results = interleaved(cases, rounds=args.rounds)
    finally:
        server.terminate()
        server.wait()

    print(f"\n{args.runs} runs, {args.connections} connections, {args.rounds}x{args.seconds}s, median of rounds")
    print_table(results)
    with open("/proc/loadavg") as loadavg:
        print(f"load average at the end (1, 5, 15 min): {' '.join(loadavg.read().split()[:3])}")


if __name__ == "__main__":
    main()
