"""Feed throughput and p99 beside an empty Django view, same gunicorn, PostgreSQL and Redis.

Run: .venv/bin/python benchmarks/feed.py [--apps 2000] [--seconds 10] [--rounds 3]
The empty view is /healthz: it passes the same middleware as the feed (both
are lean paths, edge/handler.py) and host routing, and touches no database.
The same-size view answers as many bytes as the list, from memory, through
the whole middleware of pages: the floor set by moving the list's bytes. Rate
limiting is on with the shipped policy (300 per 5 minutes per client,
counted in Redis). wrk poses as a crowd of clients behind one trusted proxy
(benchmarks/clients.lua): each client sends REQUESTS_PER_CLIENT requests
(200, within its limit) before the next takes over, and a last case gives
every request a new client, the worst case for the counters (a Redis round
trip per request).
"""

import argparse
import itertools
import json
import subprocess
import urllib.request

from common import EMPTY, bench_env, interleaved, manage, print_table, start_gunicorn

PORT = 8931


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=2000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--no-ratelimit", action="store_true", help="turn rate limiting off, to see its cost")
    args = parser.parse_args()

    env = bench_env("flowgate_bench_feed", PORT)
    # Counters of an earlier run would still hold the same client addresses inside their window.
    subprocess.run(["redis-cli", "-n", "2", "flushdb"], check=True, capture_output=True)
    env["RATELIMIT_ENABLE"] = "0" if args.no_ratelimit else "1"
    env["TRUSTED_PROXY_COUNT"] = "1"
    manage(env, "migrate", "--noinput")
    print(manage(env, "load_demo", "--apps", str(args.apps)).strip())
    server = start_gunicorn(env, PORT, app="benchmarks.baselines_wsgi:application")
    try:
        base = f"http://127.0.0.1:{PORT}"
        listing = urllib.request.urlopen(f"{base}/catalog/v1/apps")
        etag = listing.headers["ETag"]
        size = len(listing.read())
        slug = json.loads(urllib.request.urlopen(f"{base}/catalog/v1/apps").read())["apps"][0]["slug"]
        steady, fresh = {"REQUESTS_PER_CLIENT": "200"}, {"REQUESTS_PER_CLIENT": "1"}
        cases = {
            EMPTY: (f"{base}/healthz", None, steady),
            "GET /apps 200": (f"{base}/catalog/v1/apps", None, steady),
            "same-size view (list's bytes from memory, nothing else)": (f"{base}/bytes-{size}", None, steady),
            "GET /apps 200, gzip accepted": (f"{base}/catalog/v1/apps", {"Accept-Encoding": "gzip"}, steady),
            "GET /apps 304": (f"{base}/catalog/v1/apps", {"If-None-Match": etag}, steady),
            f"GET /apps/{slug} 200": (f"{base}/catalog/v1/apps/{slug}", None, steady),
            f"GET /apps/{slug} 200, a new client every request": (f"{base}/catalog/v1/apps/{slug}", None, fresh),
        }
        offsets = itertools.count(0, 400_000)  # no client comes back in a later run
        measured = {
            name: {
                "url": url,
                "headers": headers,
                "connections": args.connections,
                "seconds": args.seconds,
                "script": "clients.lua",
                # Called again for each start of a run: a restarted run meets no counter of the stopped one.
                "env": lambda clients=clients: {**clients, "CLIENT_OFFSET": str(next(offsets))},
            }
            for name, (url, headers, clients) in cases.items()
        }
        results = interleaved(measured, rounds=args.rounds)
    finally:
        server.terminate()
        server.wait()

    print(
        f"\nrate limiting {'off' if args.no_ratelimit else 'on'}; {args.apps} apps, list body {size} bytes, "
        f"{args.connections} connections, {args.rounds}x{args.seconds}s, median of rounds"
    )
    print_table(results)


if __name__ == "__main__":
    main()
