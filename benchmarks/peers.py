"""Webhook accept beside Node-RED's in-memory http-in node and the empty Django view, in one sitting.

Run: .venv/bin/python benchmarks/peers.py [--seconds 10] [--rounds 3]
Node-RED (the `node-red` npm package, NODE_RED_VERSION, installed by this
script under var/node-red with the machine's npm, and run by Node.js 22 from
the npm package `node`, since Node-RED 5 needs 22.9 or later) runs a flow of one http-in
node answering 200 through an http-response node: it stores nothing. The
hooks process (as the Procfile runs it: 2 processes, uvicorn's worker under
gunicorn) stores each webhook in PostgreSQL before its 200 and queues it in
Redis; the empty view is /healthz on a web process (2 processes of 8
threads). wrk -t2 POSTs a 1 KB JSON body (benchmarks/kb.lua) at 4 and 32
connections, the cases interleaved round by round. Goal (issue 31): the
hooks process at or above Node-RED at 32 connections and at 60% of it or
more at 4, p99 under 25 ms at 32, zero lost (every 200 has its delivery row).
"""

import argparse
import json
import re
import statistics
import subprocess
import tempfile
import time
import urllib.request

from common import ROOT, bench_env, prepare, start_gunicorn, wrk

PORT = 8970
NODE_RED_VERSION = "5.0.7"
NODE_VERSION = "22"
NODE_RED = ROOT / "var" / "node-red"
FLOW = [
    {"id": "tab", "type": "tab", "label": "bench"},
    {"id": "in", "type": "http in", "z": "tab", "url": "/hook", "method": "post", "wires": [["out"]]},
    {"id": "out", "type": "http response", "z": "tab", "statusCode": "200", "wires": []},
]
SETUP = """
from django.contrib.auth import get_user_model
from automations import services
user = get_user_model().objects.create_user("bench")
a = services.create_automation(owner=user, name="bench", enabled=True, definition={
    "trigger": {"type": "webhook"}, "settings": {"suppress_duplicates": False},
    "steps": [{"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}}]})
print(services.hook_url(a).rsplit("automation-", 1)[1])
"""


def start_node_red(port: int) -> subprocess.Popen:
    node, red = NODE_RED / "node_modules" / ".bin" / "node", NODE_RED / "node_modules" / "node-red" / "red.js"
    if not (node.exists() and red.exists()):
        NODE_RED.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(NODE_RED)]
            + [f"node-red@{NODE_RED_VERSION}", f"node@{NODE_VERSION}"],
            check=True,
            capture_output=True,
        )
    user = NODE_RED / "user"
    user.mkdir(exist_ok=True)
    (user / "flows.json").write_text(json.dumps(FLOW))
    # No editor and no admin API: only the flow's own route, as a production Node-RED would serve webhooks.
    (user / "settings.js").write_text(
        "module.exports = {httpAdminRoot: false, flowFile: 'flows.json', logging: {console: {level: 'warn'}}};\n"
    )
    process = subprocess.Popen(
        [str(node), str(red), "--userDir", str(user), "--port", str(port), "--settings", str(user / "settings.js")],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(150):
        try:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/hook", data=b"{}", method="POST")
            urllib.request.urlopen(request, timeout=1)
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("Node-RED did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--database", default="flowgate_bench_peers")
    parser.add_argument("--redis-db", default="2")
    args = parser.parse_args()

    env = bench_env(args.database, args.port, args.redis_db)
    key = prepare(env, SETUP)
    host = {"Host": f"127.0.0.1:{args.port}"}
    servers = [
        start_gunicorn(env, args.port),
        start_gunicorn(env, args.port + 1, app="config.asgi", asgi=True, host=host["Host"]),
        start_node_red(args.port + 2),
        start_gunicorn(env, args.port + 3, app="benchmarks.bare_asgi:application", asgi=True),
    ]
    base, hooks, red, bare = (f"http://127.0.0.1:{args.port + n}" for n in range(4))
    cases = {
        "empty view (/healthz), web process": {"url": f"{base}/healthz"},
        "Node-RED http-in, answers 200, stores nothing": {"url": f"{red}/hook", "script": "kb.lua", "processes": 1},
        "hooks process's server, an app that stores nothing": {"url": f"{bare}/hook", "script": "kb.lua"},
        "Flowgate webhook, hooks process, stored": {"url": f"{hooks}/automation-{key}", "script": "kb.lua"},
    }
    results = {(name, c): [] for name in cases for c in (4, 32)}
    try:
        for round_ in range(args.rounds):
            for connections in (4, 32):
                for name, case in list(cases.items())[:: 1 if round_ % 2 == 0 else -1]:
                    headers = host if "Flowgate" in name else None
                    results[(name, connections)].append(
                        wrk(**case, connections=connections, seconds=args.seconds, headers=headers, threads=2)
                    )
    finally:
        for server in servers:
            server.terminate()
            server.wait()

    accepted = sum(
        r["requests"] - r["errors"] + r["stopped_requests"] - r["stopped_errors"]
        for (name, _), runs in results.items()
        if name.startswith("Flowgate")
        for r in runs
    )
    stored = int(
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", "SELECT count(*) FROM hooks_delivery", args.database],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    print(f"\n{args.rounds} rounds x {args.seconds} s, median of rounds; wrk -t2, 1 KB JSON POST")
    print("| case | connections | req/s | p50 ms | p99 ms | vs Node-RED | vs empty view |")
    print("|---|---|---|---|---|---|---|")
    for connections in (4, 32):
        median = {name: statistics.median(r["rps"] for r in results[(name, connections)]) for name in cases}
        red_rps = median["Node-RED http-in, answers 200, stores nothing"]
        empty_rps = median["empty view (/healthz), web process"]
        for name in cases:
            runs = results[(name, connections)]
            p50 = statistics.median(r["p50_ms"] for r in runs)
            p99 = statistics.median(r["p99_ms"] for r in runs)
            rps = median[name]
            print(
                f"| {name} | {connections} | {rps:.0f} | {p50:.1f} | {p99:.1f} | {rps / red_rps:.0%} "
                f"| {rps / empty_rps:.0%} |"
            )
    for clients in (1, 2):
        print(f"a durable commit alone (pgbench, 1 KB row, {clients} client(s)): {commit_ms(args.database, clients)}")
    print(f"\nFlowgate webhooks answered 200: {accepted}; delivery rows: {stored}; lost: {max(0, accepted - stored)}")
    with open("/proc/loadavg") as loadavg:
        print(f"load average at the end (1, 5, 15 min): {' '.join(loadavg.read().split()[:3])}")


def commit_ms(database: str, clients: int, seconds: int = 5) -> str:
    """pgbench's latency of one 1 KB row INSERTed and committed on its own (synchronous_commit as configured),
    from that many clients at once: the floor of a durable accept's wait, without Flowgate."""
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc"]
    subprocess.run([*psql, "CREATE TABLE IF NOT EXISTS bench_commit (id bigserial, body bytea)", database], check=True)
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
        script.write("INSERT INTO bench_commit (body) VALUES (convert_to(repeat('x', 1024), 'UTF8'));\n")
        script.flush()
        out = subprocess.run(
            ["pgbench", "-h", "127.0.0.1", "-U", "postgres", "-n", "-M", "prepared", "-f", script.name]
            + ["-c", str(clients), "-j", str(clients), "-T", str(seconds), database],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    subprocess.run([*psql, "DROP TABLE bench_commit", database], check=True)
    latency = re.search(r"latency average = ([\d.]+) ms", out).group(1)
    rate = re.search(r"tps = ([\d.]+)", out).group(1)
    return f"{latency} ms a commit, {float(rate):.0f} commits a second"


if __name__ == "__main__":
    main()
