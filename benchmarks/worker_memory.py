"""A worker's memory over many webhook runs, in one process: does it climb, and where?

Run: .venv/bin/python benchmarks/worker_memory.py [--deliveries 20000] [--chunk 50] [--rebuilds 0]
     [--database flowgate_bench_memory]
The soak's webhook automation (benchmarks/mixed_load.py: a set_values step
and an upsert into a lookup table of 1,000 slots) on a fresh PostgreSQL
database. Deliveries are stored as the hooks process stores them and run
as a worker runs a message of them (hooks.deliveries.process_deliveries),
chunk by chunk. After a warm-up of WARM_UP deliveries, tracemalloc's
snapshot is taken; RSS and Python's traced memory are printed every tenth
of the run, and at the end the allocation sites that grew most since the
warm-up. A leak climbs with the deliveries; a warm-up stops growing.
--rebuilds N then rebuilds the catalog feed of the demo's 2,000 apps N times
(beat's catalog.rebuild_feed, which a pool process runs every 15 minutes),
with RSS after each: beat's usual case, a catalog that has not changed. Then
one app is renamed and the feed rebuilt once more, the case of an edited
catalog, for comparison.
"""

import argparse
import os
import re
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import bench_env, manage  # noqa: E402

WARM_UP = 2000


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deliveries", type=int, default=20000)
    parser.add_argument("--chunk", type=int, default=50)
    parser.add_argument("--database", default="flowgate_bench_memory")
    parser.add_argument("--redis-db", default="8")
    parser.add_argument("--rebuilds", type=int, default=0)
    args = parser.parse_args()
    env = bench_env(args.database, 8990, args.redis_db)
    manage(env, "migrate", "--noinput")
    if args.rebuilds:
        manage(env, "load_demo", "--apps", "2000")
    os.environ.update(env)

    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from automations import services
    from hooks import deliveries, intake, statements

    user = get_user_model().objects.create_user("memory")
    definition = {
        "trigger": {"type": "webhook"},
        "settings": {"suppress_duplicates": False},
        "steps": [
            {"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}},
            {
                "id": "row",
                "kind": "lookup_rows",
                "table": "seen",
                "action": "upsert",
                "match": {"slot": "{{trigger.body.slot}}"},
                "values": {"n": "{{trigger.body.n}}"},
            },
        ],
    }
    automation = services.create_automation(owner=user, name="hook", enabled=True, definition=definition)

    def run(start: int, count: int) -> None:
        rows = [
            intake.Accepted(
                automation_id=automation.pk,
                method="POST",
                path="/",
                query_string="",
                content_type="application/json",
                body=b'{"n": %d, "slot": %d, "pad": "%s"}' % (n, n % 1000, b"x" * 900),
                body_digest=f"{n:064d}",
            )
            for n in range(start, start + count)
        ]
        statements.insert_deliveries(rows)
        deliveries.process_deliveries(delivery_ids=[row.pk for row in rows])

    done = 0
    while done < WARM_UP:
        run(done, args.chunk)
        done += args.chunk
    tracemalloc.start(10)
    before, rss_before = tracemalloc.take_snapshot(), rss_kib()
    print(f"after {done:,} (warm-up): RSS {rss_before:,} KiB", flush=True)
    step = max(args.chunk, (args.deliveries - WARM_UP) // 10 // args.chunk * args.chunk)
    while done < args.deliveries:
        run(done, args.chunk)
        done += args.chunk
        if done % step == 0:
            traced, _ = tracemalloc.get_traced_memory()
            print(f"after {done:,}: RSS {rss_kib():,} KiB, traced {traced / 1024:,.0f} KiB", flush=True)
    after = tracemalloc.take_snapshot()
    print(f"\nRSS {rss_before:,} -> {rss_kib():,} KiB; the sites that grew most since the warm-up:")
    for stat in after.compare_to(before, "traceback")[:8]:
        print(f"{stat.size_diff / 1024:+,.0f} KiB in {stat.count_diff:+,} blocks")
        for line in stat.traceback.format()[-6:]:
            print("   ", line)
    if args.rebuilds:
        from catalog import feed

        tracemalloc.stop()
        print(f"\nthe feed rebuilt {args.rebuilds} times, from RSS {rss_kib():,} KiB:")
        for n in range(args.rebuilds):
            started = time.perf_counter()
            build = feed.build_feed()
            took = (time.perf_counter() - started) * 1000
            print(
                f"after rebuild {n + 1} (changed: {build.changed}, {took:,.0f} ms): RSS {rss_kib():,} KiB", flush=True
            )
        from catalog.models import App

        App.objects.filter(pk=App.objects.order_by("pk").values("pk")[:1]).update(name="Renamed For The Benchmark")
        started = time.perf_counter()
        build = feed.build_feed()
        took = (time.perf_counter() - started) * 1000
        print(f"after a rebuild of an edited catalog (changed: {build.changed}, {took:,.0f} ms): RSS {rss_kib():,} KiB")


if __name__ == "__main__":
    main()
