"""Token endpoint: refresh grants per second beside an empty Django view, same gunicorn, PostgreSQL and Redis.

Run: .venv/bin/python benchmarks/oauth.py [--seconds 10] [--rounds 3] [--connections 8]
Each connection is an MCP client refreshing its access token again and
again (benchmarks/refresh.lua): its refresh token is checked (its hash
looked up, its family and its access token's expiry), rotated (the old pair
revoked, a new pair written in one transaction), and the client's first
use recorded; the answer carries the new pair. The client is public
(token_endpoint_auth_method "none", as VS Code, Claude Code and the
Inspector register), so no secret is hashed. Refresh tokens are minted for
each attempt (a stopped, repeated attempt must not replay spent ones: that
would revoke their grants). The empty view (/healthz) runs with the same
connections and wrk threads.
"""

import argparse
import subprocess

from common import EMPTY, bench_env, interleaved, manage, print_table, start_gunicorn

PORT = 8951
SETUP = """
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from mcp_auth import registration
user = get_user_model().objects.create_user("bench")
user.user_permissions.add(Permission.objects.get(codename="use_mcp_tools"))
created = registration.register_client(name="Bench agent", redirect_uris=["http://127.0.0.1/cb"],
                                       auth_method="none", address=None)
print(created.application.client_id)
"""
MINT = """
import uuid
from datetime import timedelta
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from oauthlib.common import generate_token
from oauth2_provider.models import AccessToken, Application, RefreshToken, set_token_value
application = Application.objects.get(client_id="{client_id}")
user = get_user_model().objects.get(username="bench")
tokens = []
for _ in range({count}):
    access = AccessToken(user=user, application=application, scope="mcp:tools", resource=[settings.MCP_URL + "/mcp"],
                         expires=timezone.now() + timedelta(hours=1))
    set_token_value(access, generate_token())
    access.save()
    refresh = RefreshToken(user=user, application=application, access_token=access, token_family=uuid.uuid4(),
                           resource=[settings.MCP_URL + "/mcp"])
    raw = generate_token()
    set_token_value(refresh, raw)
    refresh.save()
    tokens.append(raw)
print(",".join(tokens))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()

    env = bench_env("flowgate_bench_oauth", PORT)
    subprocess.run(["redis-cli", "-n", "2", "flushdb"], check=True, capture_output=True)
    manage(env, "migrate", "--noinput")
    client_id = manage(env, "shell", "-c", SETUP).strip().splitlines()[-1]

    def fresh_tokens() -> dict:
        script = MINT.format(client_id=client_id, count=args.connections)
        return {"CLIENT_ID": client_id, "REFRESH_TOKENS": manage(env, "shell", "-c", script).strip().splitlines()[-1]}

    server = start_gunicorn(env, PORT)
    base = f"http://127.0.0.1:{PORT}"
    shared = {"connections": args.connections, "seconds": args.seconds, "threads": args.connections}
    cases = {
        EMPTY: {"url": f"{base}/healthz", **shared},
        "POST /oauth/token refresh_token grant (rotation)": {
            "url": f"{base}/oauth/token",
            "script": "refresh.lua",
            "env": fresh_tokens,
            **shared,
        },
    }
    try:
        results = interleaved(cases, rounds=args.rounds)
    finally:
        server.terminate()
        server.wait()

    print(f"\n{args.connections} connections (one wrk thread each), {args.rounds}x{args.seconds}s, median of rounds")
    print_table(results)


if __name__ == "__main__":
    main()
