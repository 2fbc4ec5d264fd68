"""Webhook accept throughput and p99 beside (a) an empty Django view and (b) a naive durable view.

Run: .venv/bin/python benchmarks/webhooks.py [--seconds 5] [--rounds 5]
Same gunicorn (as the Procfile: 2 processes of 8 threads; BENCH_WORKERS and
BENCH_THREADS change it), PostgreSQL and Redis for all:
(a) /healthz; (b) /naive-{key}: one indexed SELECT, one INSERT with its own
commit, one Celery .delay per request (benchmarks/baselines_wsgi.py); and the
real /automation-{key} from the hooks process, its one driver (config/asgi.py:
the same 2 processes on uvicorn's worker (edge/asgi_worker.py), its thread pool of the
same size for other paths). (a) and (b) are
also measured through the hooks process, so that its webhooks can be
compared with the same server configuration too. At 4 and 32 connections,
rounds interleaved, the median of the rounds reported with each round's
connection split and the share of CPU time the hypervisor took (steal): on a
shared machine a round can lose a third of it. Afterwards a worker drains
the queue (4 processes: it is only the check; 10-15 minutes for the 360,000
deliveries of a default run) and the script checks that 200s sent =
delivery rows = runs.
Last, the round trip of a three-step web service beside the empty view's,
one request at a time.
Beside Flowgate's webhooks, the same URL with Standard Webhooks verification
(hooks/signatures.py): each request signed, with a webhook-id of its own
(replay protection), from a file of requests signed before each run of wrk
(benchmarks/signed.lua; wrk's Lua has no HMAC). Its goal: 80% or more of the
unsigned URL's rate at 4 and at 32 connections.

--connections measures a connection's URL (/connection-{key}), an app's shared endpoint (/app-{key}, routed
by the header its app names) and the signed delivery beside the generic /automation-{key} and (a), in the same
rounds of one sitting, as --quick does (no worker: what is measured is the accept; the fan-out's drain is
benchmarks/drain.py --fan-out), and reports each one's rate as a share of the generic URL's (goal: 80% or
more at 4 and at 32 connections; docs/connections.md).

--web-services measures a web service call (three steps, the last a respond step) through the web process and
through the hooks process beside (a), at 4 and 32 connections, with each one's median and p99 (a request's round
trip under that many clients), and nothing else.

--quick measures only (a) and Flowgate's webhooks, with no round trips,
and instead of draining checks that every 200 counted has its delivery row
(what the intake promises). --port, --database and --redis-db let two trees
be measured alternately on one machine without sharing anything.
"""

import argparse
import base64
import hashlib
import hmac
import itertools
import json
import os
import statistics
import subprocess
import time

from common import PYTHON, ROOT, bench_env, prepare, start_gunicorn, wrk

PORT = 8932
SIGNED_CASE = "Flowgate signed (Standard Webhooks), hooks process"
SETUP = """
from django.contrib.auth import get_user_model
from automations import services
user = get_user_model().objects.create_user("bench")
a = services.create_automation(owner=user, name="bench", enabled=True, definition={
    "trigger": {"type": "webhook"}, "settings": {"suppress_duplicates": False},
    "steps": [{"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}}]})
ws = services.create_automation(owner=user, name="web service", enabled=True, definition={
    "trigger": {"type": "webhook"},
    "steps": [{"id": "who", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}},
              {"id": "check", "kind": "condition", "all": [{"left": "{{steps.who.n}}", "op": "exists"}]},
              {"id": "answer", "kind": "respond", "body": {"got": "{{steps.who.n}}"}}]})
signed = services.create_automation(owner=user, name="signed", enabled=True, definition=a.definition)
from hooks import verification
verification.save(automation_id=signed.pk, scheme="standard", tolerance_seconds=3600,
                  new_secret=SIGNING_SECRET, allowed_networks=[])
from catalog.models import App, Operation
from connections import services as connection_services
from hooks import endpoints
app = App.objects.create(slug="bench-crm", name="Bench CRM", auth_type="none", app_domain="bench.example")
Operation.objects.create(app=app, kind="trigger", key="new_lead", name="New lead", delivery_mode="per_connection")
connection = connection_services.connect(owner=user, app=app, label="bench")
services.create_automation(owner=user, name="on a connection", enabled=True, definition={
    "trigger": {"type": "app_trigger", "app": "bench-crm", "trigger": "new_lead", "connection": connection.pk},
    "settings": {"suppress_duplicates": False}, "steps": a.definition["steps"]})
shared = App.objects.create(slug="bench-chat", name="Bench Chat", auth_type="none", app_domain="chat.example",
                            auth_config={"routing": {"header": "X-Account-Id"}})
Operation.objects.create(app=shared, kind="trigger", key="new_message", name="New message",
                         delivery_mode="shared_endpoint")
account = connection_services.connect(owner=user, app=shared, label="bench")
from connections.models import Connection
Connection.objects.filter(pk=account.pk).update(account_id=ACCOUNT)
services.create_automation(owner=user, name="at a shared endpoint", enabled=True, definition={
    "trigger": {"type": "app_trigger", "app": "bench-chat", "trigger": "new_message", "connection": account.pk},
    "settings": {"suppress_duplicates": False}, "steps": a.definition["steps"]})
print(services.hook_url(a).rsplit("automation-", 1)[1], services.web_service_url(ws).rsplit("webservice-", 1)[1],
      services.hook_url(signed).rsplit("automation-", 1)[1],
      endpoints.connection_url(connection).rsplit("connection-", 1)[1], endpoints.app_url(shared).rsplit("app-", 1)[1])
"""
CONNECTION_CASE = "Flowgate /connection-{key}, hooks process"
APP_CASE = "Flowgate /app-{key} (shared endpoint, routed by a header), hooks process"
ACCOUNT = "acct-1"
WEB_SERVICE_CASES = ("web service, 3 steps, web process", "web service, 3 steps, hooks process")
SIGNING_SECRET = "whsec_" + base64.b64encode(b"benchmark-signing-secret-32bytes").decode()
SIGNED_PER_SECOND = 60_000  # more than a run can send: a request signed twice would be refused as a replay
COUNT = """
SELECT json_build_object(
    'deliveries', (SELECT count(*) FROM hooks_delivery),
    'done', (SELECT count(*) FROM hooks_delivery WHERE status = 'done'),
    'runs', (SELECT count(*) FROM automations_run WHERE source = 'webhook'),
    'succeeded', (SELECT count(*) FROM automations_run WHERE source = 'webhook' AND status = 'succeeded'))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--connections", action="store_true", help="a connection's URL beside the generic URL")
    parser.add_argument("--web-services", action="store_true", help="web service calls at 4 and 32 connections")
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--database", default="flowgate_bench_hooks")
    parser.add_argument("--redis-db", default="2")
    args = parser.parse_args()

    database, port, redis_db = args.database, args.port, args.redis_db
    env = bench_env(database, port, redis_db, WEB_SERVICE_MONTHLY_QUOTA="100000000")
    key, service_key, signed_key, connection_key, app_key = prepare(
        env, SETUP.replace("SIGNING_SECRET", repr(SIGNING_SECRET)).replace("ACCOUNT", repr(ACCOUNT))
    ).split()
    server = start_gunicorn(env, port, app="benchmarks.baselines_wsgi:application")
    host = {"Host": f"127.0.0.1:{port}"}  # the hooks process serves the same configured host on its own port
    hooks_server = start_gunicorn(
        env, port + 1, app="benchmarks.baselines_wsgi:asgi_application", asgi=True, host=host["Host"]
    )
    base, hooks_base = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port + 1}"
    cases = {
        "(a) empty view /healthz": (f"{base}/healthz", None, None),
        "(b) naive durable view": (f"{base}/naive-{key}", "post.lua", None),
        "Flowgate /automation-{key}, hooks process": (f"{hooks_base}/automation-{key}", "post.lua", host),
        SIGNED_CASE: (f"{hooks_base}/automation-{signed_key}", "signed.lua", host),
        # (a) and (b) as the hooks process serves them: Django in its thread pool, behind the event loop.
        "(a) empty view, hooks process": (f"{hooks_base}/healthz", None, host),
        "(b) naive durable view, hooks process": (f"{hooks_base}/naive-{key}", "post.lua", host),
    }
    if args.connections:
        args.quick = True
        cases[CONNECTION_CASE] = (f"{hooks_base}/connection-{connection_key}", "post.lua", host)
        cases[APP_CASE] = (f"{hooks_base}/app-{app_key}", "post.lua", {**host, "X-Account-Id": ACCOUNT})
    if args.web_services:
        args.quick = True
        cases = {
            "(a) empty view /healthz": cases["(a) empty view /healthz"],
            WEB_SERVICE_CASES[0]: (f"{base}/webservice-{service_key}", "post.lua", None),
            WEB_SERVICE_CASES[1]: (f"{hooks_base}/webservice-{service_key}", "post.lua", host),
        }
    elif args.quick:
        cases = {name: case for name, case in cases.items() if name.startswith(("(a) empty view /", "Flowgate"))}
    signed_runs = itertools.count()  # each run of wrk signs ids of its own
    results = {(name, c): [] for name in cases for c in (4, 32)}
    round_trips = {
        "(a) empty view /healthz": [],
        "web service, 3 steps, web process": [],
        "web service, 3 steps, hooks process": [],
    }
    try:
        for round_ in range(args.rounds):
            for connections in (4, 32):
                # Every other round in reverse order, so that a drift of the machine favours no case.
                for name, (url, script, headers) in list(cases.items())[:: 1 if round_ % 2 == 0 else -1]:
                    signing = None
                    if name == SIGNED_CASE:  # a fresh file for each attempt: a webhook-id is accepted once

                        def signing():
                            return {"BENCH_SIGNED": sign_requests(next(signed_runs), args.seconds)}

                    results[(name, connections)].append(
                        wrk(
                            url,
                            connections=connections,
                            seconds=args.seconds,
                            script=script,
                            headers=headers,
                            env=signing,
                        )
                    )
            if args.quick:
                continue
            # Round trip: one connection, so that the median is one request's time, not a queue's.
            round_trips["(a) empty view /healthz"].append(wrk(f"{base}/healthz", connections=1, seconds=args.seconds))
            round_trips["web service, 3 steps, web process"].append(
                wrk(f"{base}/webservice-{service_key}", connections=1, seconds=args.seconds, script="post.lua")
            )
            round_trips["web service, 3 steps, hooks process"].append(
                wrk(
                    f"{hooks_base}/webservice-{service_key}",
                    connections=1,
                    seconds=args.seconds,
                    script="post.lua",
                    headers=host,
                )
            )
    finally:
        for process in (server, hooks_server):
            process.terminate()
            process.wait()
        (ROOT / "var" / "bench-signed.txt").unlink(missing_ok=True)

    accepted = sum(
        r["requests"] - r["errors"] + r["stopped_requests"] - r["stopped_errors"]
        for (name, _), runs in results.items()
        if not name.startswith("(a)")
        for r in runs
    )
    if args.web_services:
        return report_web_services(args, results)
    if args.quick:
        return report_quick(args, cases, results, accepted, database)
    command = [PYTHON, "-m", "celery", "-A", "config", "worker", "--concurrency", "4", "--loglevel", "WARNING"]
    worker = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        # The hooks process accepts far more than the worker drains (about 500 a second here), so this takes
        # minutes; it gives up only when a whole minute passes with no delivery done.
        progress_at, done = time.monotonic(), -1
        while time.monotonic() - progress_at < 60:  # psql, not a Django shell: polling must not take the worker's CPU
            counts = json.loads(
                subprocess.run(
                    ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", COUNT, database],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
            if counts["done"] == counts["deliveries"]:
                break
            if counts["done"] != done:
                progress_at, done = time.monotonic(), counts["done"]
            time.sleep(5)
    finally:
        worker.terminate()
        worker.wait()

    workers, threads = os.environ.get("BENCH_WORKERS", "2"), os.environ.get("BENCH_THREADS", "8")
    gunicorn = f"gunicorn {workers} x {threads} threads"
    print(f"\n{args.rounds} rounds x {args.seconds} s, median of rounds; wrk -t1; {gunicorn}")
    print("| case | connections | req/s | p99 ms | vs (a) | vs (b) | errors | splits by round | steal % by round |")
    print("|---|---|---|---|---|---|---|---|---|")
    for connections in (4, 32):
        empty = statistics.median(r["rps"] for r in results[("(a) empty view /healthz", connections)])
        naive = statistics.median(r["rps"] for r in results[("(b) naive durable view", connections)])
        for name in cases:
            runs = results[(name, connections)]
            rps = statistics.median(r["rps"] for r in runs)
            p99 = statistics.median(r["p99_ms"] for r in runs)
            errors = sum(r["errors"] + r["socket_errors"] for r in runs)
            splits = " ".join("/".join(map(str, r["split"])) for r in runs)
            steal = " ".join(f"{r['steal']:.0%}".rstrip("%") for r in runs)
            ratios = f"{rps / empty:.0%} | {rps / naive:.0%}"
            print(f"| {name} | {connections} | {rps:.0f} | {p99:.1f} | {ratios} | {errors} | {splits} | {steal} |")
    print("\nSigned (Standard Webhooks) beside the same URL unsigned (goal: 80% or more):")
    print("| connections | signed req/s | unsigned req/s | signed / unsigned |")
    print("|---|---|---|---|")
    for connections in (4, 32):
        signed = statistics.median(r["rps"] for r in results[(SIGNED_CASE, connections)])
        plain = statistics.median(r["rps"] for r in results[("Flowgate /automation-{key}, hooks process", connections)])
        print(f"| {connections} | {signed:.0f} | {plain:.0f} | {signed / plain:.0%} |")
    print("\nThe hooks process against (a) and (b) as the hooks process itself serves them:")
    print("| connections | Flowgate req/s | (a) req/s | (b) req/s | vs (a) | vs (b) |")
    print("|---|---|---|---|---|---|")
    for connections in (4, 32):
        names = (
            "Flowgate /automation-{key}, hooks process",
            "(a) empty view, hooks process",
            "(b) naive durable view, hooks process",
        )
        rps = {name: statistics.median(r["rps"] for r in results[(name, connections)]) for name in names}
        flowgate, empty, naive = rps.values()
        ratios = f"{flowgate / empty:.0%} | {flowgate / naive:.0%}"
        print(f"| {connections} | {flowgate:.0f} | {empty:.0f} | {naive:.0f} | {ratios} |")
    print(f"\n200s answered by (b) and Flowgate: {accepted}; after the worker drained the queue: {counts}")
    print("\n| round trip, 1 connection | median ms | p99 ms | req/s |")
    print("|---|---|---|---|")
    for name, runs in round_trips.items():
        print(
            f"| {name} | {statistics.median(r['p50_ms'] for r in runs):.2f} | "
            f"{statistics.median(r['p99_ms'] for r in runs):.2f} | {statistics.median(r['rps'] for r in runs):.0f} |"
        )


def sign_requests(run: int, seconds: int) -> str:
    """Write the file of requests signed now with SIGNING_SECRET that benchmarks/signed.lua reads, for the run-th
    run of wrk (the last run's file is replaced: wrk has read it); returns its path."""
    path = ROOT / "var" / "bench-signed.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    at = int(time.time())
    key = base64.b64decode(SIGNING_SECRET.removeprefix("whsec_"))
    with open(path, "w") as file:
        for n in range(seconds * SIGNED_PER_SECOND):
            webhook_id, body = f"msg_{run}_{n}", b'{"event": "signup", "n": %d}' % n
            digest = hmac.digest(key, b"%s.%d.%s" % (webhook_id.encode(), at, body), hashlib.sha256)
            file.write(f"{webhook_id} {at} v1,{base64.b64encode(digest).decode()} {body.decode()}\n")
    return str(path)


def report_quick(args, cases: dict, results: dict, accepted: int, database: str) -> None:
    counts = json.loads(
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", COUNT, database],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    print(
        f"\n{args.rounds} rounds x {args.seconds} s, median of rounds; 200s answered: {accepted}; "
        f"delivery rows: {counts['deliveries']}"
    )
    print("| case | connections | req/s | p99 ms | vs (a) | errors | splits by round | steal % by round |")
    print("|---|---|---|---|---|---|---|---|")
    for connections in (4, 32):
        empty = statistics.median(r["rps"] for r in results[("(a) empty view /healthz", connections)])
        for name in cases:
            runs = results[(name, connections)]
            rps = statistics.median(r["rps"] for r in runs)
            p99 = statistics.median(r["p99_ms"] for r in runs)
            errors = sum(r["errors"] + r["socket_errors"] for r in runs)
            splits = " ".join("/".join(map(str, r["split"])) for r in runs)
            steal = " ".join(f"{r['steal']:.0%}".rstrip("%") for r in runs)
            print(
                f"| {name} | {connections} | {rps:.0f} | {p99:.1f} | {rps / empty:.0%} "
                f"| {errors} | {splits} | {steal} |"
            )
    if CONNECTION_CASE in cases:
        print("\nBeside the generic webhook URL, same rounds (goal: 80% or more):")
        print("| case | connections | req/s | /automation- req/s | case / generic |")
        print("|---|---|---|---|---|")
        for name in (CONNECTION_CASE, APP_CASE, SIGNED_CASE):
            for connections in (4, 32):
                routed = statistics.median(r["rps"] for r in results[(name, connections)])
                plain = statistics.median(
                    r["rps"] for r in results[("Flowgate /automation-{key}, hooks process", connections)]
                )
                print(f"| {name} | {connections} | {routed:.0f} | {plain:.0f} | {routed / plain:.0%} |")


def report_web_services(args, results: dict) -> None:
    print(f"\n{args.rounds} rounds x {args.seconds} s, median of rounds")
    print("| case | connections | req/s | median ms | p99 ms | req/s vs (a) | errors | splits by round |")
    print("|---|---|---|---|---|---|---|---|")
    for connections in (4, 32):
        empty = statistics.median(r["rps"] for r in results[("(a) empty view /healthz", connections)])
        for name in ("(a) empty view /healthz", *WEB_SERVICE_CASES):
            runs = results[(name, connections)]
            rps = statistics.median(r["rps"] for r in runs)
            p50 = statistics.median(r["p50_ms"] for r in runs)
            p99 = statistics.median(r["p99_ms"] for r in runs)
            errors = sum(r["errors"] + r["socket_errors"] for r in runs)
            splits = " ".join("/".join(map(str, r["split"])) for r in runs)
            figures = f"{rps:.0f} | {p50:.2f} | {p99:.2f} | {rps / empty:.0%}"
            print(f"| {name} | {connections} | {figures} | {errors} | {splits} |")


if __name__ == "__main__":
    main()
