"""MCP throughput: tools/list and a catalog search tools/call per second with a valid token, beside the empty view.

Run: .venv/bin/python benchmarks/mcp.py [--apps 2000] [--seconds 10] [--rounds 3]
One gunicorn as the Procfile runs it (edge/gunicorn.py), PostgreSQL and
Redis. The empty view is /healthz: the same middleware and host routing, no
database. Each MCP request is a stateless POST carrying its bearer token, so
each pays the token check (django-oauth-toolkit's validator: the token with
its user and application, then the user's permissions; remembered for
MCP_TOKEN_CHECK_SECONDS) besides its own work; the search reads the catalog (one
query for the apps, one for their operations). Goal: 50% or more of the
empty view.
"""

import argparse
import json
import subprocess

from common import EMPTY, bench_env, interleaved, manage, print_table, start_gunicorn

PORT = 8937
REDIS_DB = "6"
MAKE_TOKEN = """
from datetime import timedelta
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application
from mcp_auth.tests.tokens import grant_mcp_tools
user, _ = User.objects.get_or_create(username="bench-agent")
grant_mcp_tools(user)
app = Application.objects.create(name="bench", client_type="public", authorization_grant_type="authorization-code",
    redirect_uris="http://127.0.0.1/cb")
AccessToken.objects.create(user=user, application=app, token="bench-token-" + "x" * 32, scope="mcp:tools",
    expires=timezone.now() + timedelta(hours=2), resource=[settings.MCP_URL + "/mcp"])
"""
TOKEN = "bench-token-" + "x" * 32


def message(method: str, params: dict | None = None) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=2000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()

    env = bench_env("flowgate_bench_mcp", PORT)
    env["REDIS_URL"] = f"redis://127.0.0.1:6379/{REDIS_DB}"
    subprocess.run(["redis-cli", "-n", REDIS_DB, "flushdb"], check=True, capture_output=True)
    manage(env, "migrate", "--noinput")
    print(manage(env, "load_demo", "--apps", str(args.apps)).strip())
    manage(env, "shell", "-c", MAKE_TOKEN)
    server = start_gunicorn(env, PORT)
    base = f"http://127.0.0.1:{PORT}"
    mcp = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
    mcp_versioned = {**mcp, "MCP-Protocol-Version": "2025-06-18"}
    search = message("tools/call", {"name": "search_apps", "arguments": {"query": "crm", "limit": 10}})
    cases = {
        EMPTY: (f"{base}/healthz", None, None),
        "tools/list": (f"{base}/mcp", mcp_versioned, message("tools/list")),
        "tools/call search_apps 'crm' (10 apps)": (f"{base}/mcp", mcp_versioned, search),
    }
    try:
        for name, (url, headers, body) in cases.items():  # each answers what it should before it is measured
            if body is not None:
                check = subprocess.run(
                    ["curl", "-sf", "-X", "POST", url, "-d", body, "-H", "Content-Type: application/json"]
                    + [arg for key, value in headers.items() for arg in ("-H", f"{key}: {value}")],
                    capture_output=True,
                    text=True,
                )
                answer = json.loads(check.stdout)
                assert "result" in answer and not answer["result"].get("isError"), (name, check.stdout[:300])
        measured = {
            name: {
                "url": url,
                "headers": headers,
                "connections": args.connections,
                "seconds": args.seconds,
                **({"script": "mcp_post.lua", "env": {"MCP_BODY": body}} if body else {}),
            }
            for name, (url, headers, body) in cases.items()
        }
        results = interleaved(measured, rounds=args.rounds)
    finally:
        server.terminate()
        server.wait()

    print(f"\n{args.apps} apps, {args.connections} connections, {args.rounds}x{args.seconds}s, median of rounds")
    print_table(results)


if __name__ == "__main__":
    main()
