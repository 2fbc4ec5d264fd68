"""A lookup table's add at 1,000, 10,000 and 100,000 rows, beside the count of its rows an add made before.

Run: .venv/bin/python benchmarks/lookup_tables.py [--adds 300] [--database flowgate_bench_lookup]
On PostgreSQL, in one process: the step (automations/steps/lookup_rows.py) adds ADDS rows to a table filled
to each size, each add its own transaction as a run's step is; the baseline, in the same run, is the statement
an add sent before the table kept its count (automations/lookup_tables.py): a COUNT of the table's rows.
Reported: the median and p99 of each, in milliseconds. Goal: an add costs the same at any size.
"""

import argparse
import json

from common import bench_env, manage, prepare

SETUP = """
from django.contrib.auth import get_user_model
get_user_model().objects.create_user("bench")
print("ready")
"""

MEASURE = """
import json, statistics, time
from types import SimpleNamespace
from django.contrib.auth import get_user_model
from automations import lookup_tables, services
from automations.models import LookupRow
from automations.steps import lookup_rows

def spread(times):
    times = sorted(times)
    return round(statistics.median(times) * 1000, 3), round(times[int(len(times) * 0.99) - 1] * 1000, 3)

owner = get_user_model().objects.get(username="bench")
automation = services.create_automation(owner=owner, name="lookup", definition={
    "trigger": {"type": "webhook"}, "steps": [], "settings": {}})
context = SimpleNamespace(automation=automation)
adds = ADDS
figures = []
for size in (1_000, 10_000, 100_000):
    have = LookupRow.objects.filter(automation=automation, table="t").count()
    LookupRow.objects.bulk_create(
        (LookupRow(owner=owner, automation=automation, table="t", data={"n": n}) for n in range(have, size - adds)),
        batch_size=5000)
    lookup_tables.recount(owner_id=owner.pk, automation_id=automation.pk, table="t")  # as admin would
    lookup_rows.run({"table": "t", "action": "add", "values": {"n": -1}}, context)
    added = []
    for n in range(adds - 1):
        start = time.perf_counter()
        lookup_rows.run({"table": "t", "action": "add", "values": {"n": n}}, context)
        added.append(time.perf_counter() - start)
    counted = []
    for _ in range(adds):
        start = time.perf_counter()
        LookupRow.objects.filter(owner_id=owner.pk, table="t", automation=automation).count()
        counted.append(time.perf_counter() - start)
    figures.append({"rows": size, "add": spread(added), "count before": spread(counted)})
print(json.dumps(figures))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--adds", type=int, default=300)
    parser.add_argument("--database", default="flowgate_bench_lookup")
    args = parser.parse_args()
    env = bench_env(args.database, 8990, redis_db="2")
    prepare(env, SETUP)
    figures = json.loads(manage(env, "shell", "-c", MEASURE.replace("ADDS", str(args.adds))).strip().splitlines()[-1])
    print("| rows in the table | add: median ms | add: p99 ms | baseline, the count an add made before: median | p99 |")
    print("|---|---|---|---|---|")
    for figure in figures:
        (add, add_p99), (count, count_p99) = figure["add"], figure["count before"]
        print(f"| {figure['rows']:,} | {add} | {add_p99} | {count} | {count_p99} |")


if __name__ == "__main__":
    main()
