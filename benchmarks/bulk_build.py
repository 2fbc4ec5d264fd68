"""Bulk build time and peak memory for a large catalog (default 10,000 apps x 20 operations).

Run: .venv/bin/python benchmarks/bulk_build.py [--apps 10000] [--operations 20]
Seeds the catalog with bulk inserts, then runs `manage.py build_bulk` in a
fresh process and reports its wall time and peak resident memory (the whole
process, Django included), beside the same process doing nothing but start.
"""

import argparse
import os
import subprocess
import sys
import time

from common import ROOT, bench_env, manage

SEED = """
import django; django.setup()
from catalog.demo import demo_document
from catalog.models import App, Operation
import base64
doc = demo_document(apps={apps}, operations={operations})
apps = [App(slug=a["slug"], name=a["name"], description=a["description"], category=a["category"],
            auth_type=a["auth_type"], app_domain=a["app_domain"], popularity=a["popularity"],
            published=a["published"], retired_at=None,
            auth_config=a["auth_config"], logo=base64.b64decode(a["logo"]["base64"]) if a["logo"] else None,
            logo_content_type=a["logo"]["content_type"] if a["logo"] else "") for a in doc["apps"]]
App.objects.bulk_create(apps, batch_size=1000)
ids = dict(App.objects.values_list("slug", "id"))
ops = []
for a in doc["apps"]:
    for kind in ("triggers", "actions"):
        for i, o in enumerate(a[kind]):
            ops.append(Operation(app_id=ids[a["slug"]], kind=kind[:-1], key=o["key"], name=o["name"],
                                 description=o.get("description", ""), position=i, endpoint=o.get("endpoint", ""),
                                 http_method=o.get("http_method", ""), request_template=o.get("request_template", {{}}),
                                 delivery_mode=o.get("delivery_mode", "")))
Operation.objects.bulk_create(ops, batch_size=5000)
print(len(apps), len(ops))
"""

MEASURE = """
import resource, sys, time, django
django.setup()
from django.core.management import call_command
start = time.perf_counter()
if sys.argv[1] == "build":
    call_command("build_bulk")
print("elapsed", time.perf_counter() - start)
print("maxrss_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def run(env: dict, mode: str) -> dict:
    command = [sys.executable, "-c", MEASURE, mode]
    out = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout
    values = dict(line.split() for line in out.splitlines() if line.split()[0] in ("elapsed", "maxrss_mb"))
    return {k: float(v) for k, v in values.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=10_000)
    parser.add_argument("--operations", type=int, default=20)
    args = parser.parse_args()
    env = bench_env("flowgate_bench_bulk", 8932)
    manage(env, "migrate", "--noinput")
    started = time.perf_counter()
    seeded = subprocess.run(
        [sys.executable, "-c", SEED.format(apps=args.apps, operations=args.operations)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    print(f"seeded {seeded[0]} apps, {seeded[1]} operations in {time.perf_counter() - started:.1f}s")
    idle = run(env, "idle")
    build = run(env, "build")
    size = subprocess.run(
        [
            "psql",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "flowgate_bench_bulk",
            "-tAc",
            "SELECT length(body), length(gzip_body) FROM catalog_feeddocument WHERE key='bulk'",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print("| case | wall s | peak RSS MB |")
    print("|---|---|---|")
    print(f"| process start only (baseline) | {idle['elapsed']:.2f} | {idle['maxrss_mb']:.0f} |")
    case = f"build_bulk {args.apps} apps x {args.operations} ops"
    print(f"| {case} | {build['elapsed']:.2f} | {build['maxrss_mb']:.0f} |")
    print(f"artifact bytes (plain|gzip): {size}")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
