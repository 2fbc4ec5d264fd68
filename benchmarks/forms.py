"""Hosted forms beside an empty Django view, same gunicorn, PostgreSQL and Redis (docs/interfaces.md, "Forms").

Run: .venv/bin/python benchmarks/forms.py [--seconds 10] [--rounds 3] [--connections 8]
     [--port 8933] [--database flowgate_bench_forms] [--redis-db 2]
Cases: the empty view (/healthz: host routing, no database, and the middleware
of lean paths, edge/handler.py), an empty answer through every middleware a
page passes (/bytes-0, benchmarks/baselines_wsgi.py), GET of a hosted form
(its key's lookup, the automation's row, the page rendered with its CSRF
token and signed shown time), and a form POST
that starts a run (rate limits counted in Redis, the answers validated, a
run and a session key committed, the task queued on commit; 303). Goal: the
GET at 50% or more of the empty view. No worker runs: the queued runs wait.
The limits are set high enough never to refuse, so their counting is in the
cost but no request is refused.
"""

import argparse
import re
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

from common import EMPTY, bench_env, interleaved, prepare, print_table, start_gunicorn

PORT = 8933
PAGE_EMPTY = "empty answer through a page's middleware (/bytes-0)"
SETUP = """
from django.contrib.auth import get_user_model
from automations import services
user = get_user_model().objects.create_user("bench")
fields = [{"name": "email", "type": "email", "required": True},
          {"name": "topic", "type": "select", "options": ["sales", "support"], "required": True},
          {"name": "note", "type": "long_text"}]
automation = services.create_automation(owner=user, name="Bench form", enabled=True,
    definition={"trigger": {"type": "form", "title": "Contact", "fields": fields}, "steps": []})
print(services.form_url(automation))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--database", default="flowgate_bench_forms")
    parser.add_argument("--redis-db", default="2")
    args = parser.parse_args()

    rates = {"FORM_RATE_IP": "100000000/s", "FORM_RATE_FORM": "100000000/s"}
    env = bench_env(args.database, args.port, args.redis_db, FORM_MIN_FILL_SECONDS="0", **rates)
    form_url = prepare(env, SETUP)
    server = start_gunicorn(env, args.port, app="benchmarks.baselines_wsgi:application")
    try:
        base = f"http://127.0.0.1:{args.port}"
        form = base + urllib.parse.urlsplit(form_url).path
        jar = CookieJar()
        page = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar)).open(form).read().decode()
        hidden = dict(re.findall(r'name="(csrfmiddlewaretoken|fg-shown)" value="([^"]+)"', page))
        body = urllib.parse.urlencode({**hidden, "email": "ada@example.com", "topic": "sales"})
        cookie = "; ".join(f"{c.name}={c.value}" for c in jar)
        post_env = {"FORM_COOKIE": cookie, "FORM_BODY": body}
        shared = {"connections": args.connections, "seconds": args.seconds}
        cases = {
            EMPTY: {"url": f"{base}/healthz", **shared},
            PAGE_EMPTY: {"url": f"{base}/bytes-0", **shared},
            "GET hosted form": {"url": form, **shared},
            "POST hosted form (starts a run, 303)": {"url": form, "script": "form_post.lua", "env": post_env, **shared},
        }
        results = interleaved(cases, rounds=args.rounds)
    finally:
        server.terminate()
        server.wait()

    print(f"\n{args.connections} connections, {args.rounds}x{args.seconds}s, median of rounds")
    print_table(results)
    # The machine is shared: each round's own ratios, whose cases ran one after the other, drift least.
    print("\nper round, vs the empty view and the empty answer through a page's middleware of the same round:")
    for i, empty_run in enumerate(results[EMPTY]):
        page_run = results[PAGE_EMPTY][i]
        get, post = (results[name][i]["rps"] for name in ("GET hosted form", "POST hosted form (starts a run, 303)"))
        print(
            f"  round {i + 1}: GET {get / empty_run['rps']:.0%} and {get / page_run['rps']:.0%}, POST "
            f"{post / empty_run['rps']:.0%} and {post / page_run['rps']:.0%} (empty view {empty_run['rps']:.0f}/s, "
            f"empty answer through a page's middleware {page_run['rps']:.0f}/s)"
        )
    with open("/proc/loadavg") as loadavg:
        print(f"load average at the end (1, 5, 15 min): {' '.join(loadavg.read().split()[:3])}")


if __name__ == "__main__":
    main()
