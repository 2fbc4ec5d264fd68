"""A mixed run: webhooks, web services, the feed, hosted forms, chat and MCP at once, for ten minutes or an hour.

Run: .venv/bin/python benchmarks/soak.py [--minutes 60] [--scale 1] [--port 8960]
     [--database flowgate_soak] [--redis-db 10]
The service as production runs it (Procfile, docs/operations.md): 2 web
processes of 8 threads, 2 hooks processes, 2 Celery workers and beat, on
PostgreSQL and Redis. Every route is asked at a steady rate of its own
(ROUTES; --scale multiplies them), from clients rotating behind one trusted
proxy so that the low-rate limits count as a crowd's would (the per-form
limit is raised: one form takes every POST here). The checks, each a
failure of the run (exit 1) when broken:
- zero lost: every webhook answered 200 has its delivery row, and every
  delivery ended (done);
- every run ended: none queued, running or retrying once the workers drained;
- no 5xx, no refused connection, and no 429 (the clients rotate);
- each process's RSS at the end within 10% of its RSS after RSS_AT minutes
  (a fifth of the run when shorter), the processes found by their ports and
  the workers' names.
Reported: per route, requests, statuses, median and p99, beside the
same run's empty view (/healthz on the web process). .ci/run runs the
ten-minute version; the hour is this command with --minutes 60. Latencies
are reported, never asserted: the machine may be shared.
"""

import argparse
import asyncio
import itertools
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
from common import PYTHON, ROOT, bench_env, manage, start_gunicorn

PORT = 8960
RSS_AT = 5  # minutes
RSS_GROWTH = 0.10
# Requests per second of each route at --scale 1: about 70 a second in all, a busy small deployment's mix.
ROUTES = {
    "empty view (/healthz)": 5,
    "webhook": 40,
    "web service (respond step)": 5,
    "feed list (gzip)": 2,
    "feed detail": 2,
    "feed 304": 2,
    "form GET": 3,
    "form POST (GET, then POST)": 1,
    "chat message": 1,
    "MCP tools/call search_apps": 2,
}
SETUP = """
import json
from datetime import timedelta
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application
from automations import services
from mcp_auth.tests.tokens import grant_mcp_tools
user = get_user_model().objects.create_user("soak")
hook = services.create_automation(owner=user, name="hook", enabled=True, definition={
    "trigger": {"type": "webhook"}, "settings": {"suppress_duplicates": False},
    "steps": [{"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}},
              {"id": "row", "kind": "lookup_rows", "table": "seen", "action": "add",
               "values": {"n": "{{trigger.body.n}}"}}]})
service = services.create_automation(owner=user, name="service", enabled=True, definition={
    "trigger": {"type": "webhook"},
    "steps": [{"id": "who", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}},
              {"id": "answer", "kind": "respond", "body": {"got": "{{steps.who.n}}"}}]})
fields = [{"name": "email", "type": "email", "required": True}, {"name": "note", "type": "long_text"}]
form = services.create_automation(owner=user, name="form", enabled=True, definition={
    "trigger": {"type": "form", "title": "Contact", "fields": fields},
    "steps": [{"id": "v", "kind": "set_values", "values": {"e": "{{trigger.body.email}}"}}]})
chat = services.create_automation(owner=user, name="chat", enabled=True, definition={
    "trigger": {"type": "chat", "title": "Soak"},
    "steps": [{"id": "answer", "kind": "chat_reply", "text": "You said: {{trigger.message}}"}]})
agent = get_user_model().objects.create_user("soak-agent")
grant_mcp_tools(agent)
app = Application.objects.create(name="soak", client_type="public", authorization_grant_type="authorization-code",
    redirect_uris="http://127.0.0.1/cb")
AccessToken.objects.create(user=agent, application=app, token=TOKEN, scope="mcp:tools",
    expires=timezone.now() + timedelta(days=2), resource=[settings.MCP_URL + "/mcp"])
print(json.dumps({"hook": services.hook_url(hook), "service": services.web_service_url(service),
                  "form": services.form_url(form), "chat": services.chat_widget_url(chat)}))
"""
TOKEN = "soak-token-" + "x" * 32
COUNT = """
SELECT json_build_object(
    'deliveries', (SELECT count(*) FROM hooks_delivery),
    'not_done', (SELECT count(*) FROM hooks_delivery WHERE status <> 'done'),
    'unended', (SELECT count(*) FROM automations_run WHERE status IN ('queued', 'running', 'retrying')),
    'failed', (SELECT count(*) FROM automations_run WHERE status = 'failed'),
    'runs', (SELECT count(*) FROM automations_run))
"""


@dataclass
class Route:
    name: str
    rate: float
    times: list[float] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)

    def count(self, status: str) -> None:
        self.statuses[status] = self.statuses.get(status, 0) + 1


class Load:
    """The clients: one loop per route, each asking at its own steady rate until told to stop."""

    def __init__(self, web: str, hooks: str, host: str, urls: dict, scale: float):
        self.web, self.hooks, self.host, self.urls = web, hooks, host, urls
        self.routes = {name: Route(name, rate * scale) for name, rate in ROUTES.items()}
        self.accepted: list[int] = []  # webhook bodies' n answered 200
        self.numbers = itertools.count(1)
        self.addresses = itertools.count(1)
        self.stopping = asyncio.Event()
        self.slugs: list[str] = []
        self.etags: dict[str, str] = {}

    def forwarded(self) -> dict:
        c = next(self.addresses) // 20  # 20 requests per client address, then the next
        return {"X-Forwarded-For": f"10.{(c >> 16) % 256}.{(c >> 8) % 256}.{c % 256}", "Host": self.host}

    async def run(self, client: httpx.AsyncClient) -> None:
        listing = await client.get(f"{self.web}/catalog/v1/apps", headers=self.forwarded())
        self.slugs = [app["slug"] for app in listing.json()["apps"]][:200]
        asks = {
            "empty view (/healthz)": self.empty,
            "webhook": self.webhook,
            "web service (respond step)": self.web_service,
            "feed list (gzip)": self.feed_list,
            "feed detail": self.feed_detail,
            "feed 304": self.feed_304,
            "form GET": self.form_get,
            "form POST (GET, then POST)": self.form_post,
            "chat message": self.chat,
            "MCP tools/call search_apps": self.mcp,
        }
        await asyncio.gather(*(self.steady(self.routes[name], ask, client) for name, ask in asks.items()))

    def keep_only(self, prefixes: list[str]) -> None:
        for route in self.routes.values():
            if not route.name.startswith((*prefixes, "empty view")):
                route.rate = 0

    async def steady(self, route: Route, ask, client: httpx.AsyncClient) -> None:
        """Ask at route.rate a second, each request in a task of its own: a slow answer never slows the rate."""
        if route.rate <= 0:
            return
        interval, next_at, pending = 1 / route.rate, time.monotonic(), set()
        while not self.stopping.is_set():
            task = asyncio.create_task(self.timed(route, ask, client))
            pending.add(task)
            task.add_done_callback(pending.discard)
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        await asyncio.gather(*pending)

    async def timed(self, route: Route, ask, client: httpx.AsyncClient) -> None:
        started = time.perf_counter()
        try:
            status = await ask(client)
        except httpx.HTTPError as error:
            route.count(type(error).__name__)
            return
        route.times.append(time.perf_counter() - started)
        route.count(str(status))

    async def empty(self, client) -> int:
        return (await client.get(f"{self.web}/healthz", headers=self.forwarded())).status_code

    async def webhook(self, client) -> int:
        n = next(self.numbers)
        body = json.dumps({"n": n, "pad": "x" * 1000})
        answer = await client.post(
            self.hooks + urlsplit(self.urls["hook"]).path,
            content=body,
            headers={**self.forwarded(), "Content-Type": "application/json"},
        )
        if answer.status_code == 200:
            self.accepted.append(n)
        return answer.status_code

    async def web_service(self, client) -> int:
        n = next(self.numbers)
        answer = await client.post(
            self.hooks + urlsplit(self.urls["service"]).path, json={"n": n}, headers=self.forwarded()
        )
        if answer.status_code == 200 and answer.json() != {"got": n}:
            return 599  # a wrong answer counts as a failure
        return answer.status_code

    async def feed_list(self, client) -> int:
        headers = {**self.forwarded(), "Accept-Encoding": "gzip"}
        return (await client.get(f"{self.web}/catalog/v1/apps", headers=headers)).status_code

    async def feed_detail(self, client) -> int:
        slug = random.choice(self.slugs)
        answer = await client.get(f"{self.web}/catalog/v1/apps/{slug}", headers=self.forwarded())
        if etag := answer.headers.get("ETag"):
            self.etags[slug] = etag
        return answer.status_code

    async def feed_304(self, client) -> int:
        if not self.etags:
            return await self.feed_detail(client)
        slug, etag = random.choice(list(self.etags.items()))
        headers = {**self.forwarded(), "If-None-Match": etag}
        answer = await client.get(f"{self.web}/catalog/v1/apps/{slug}", headers=headers)
        return answer.status_code

    async def form_get(self, client) -> int:
        return (await client.get(self.web + urlsplit(self.urls["form"]).path, headers=self.forwarded())).status_code

    async def form_post(self, client) -> int:
        """As a browser: its own page (CSRF cookie and token, the signed shown time), then the answers."""
        url = self.web + urlsplit(self.urls["form"]).path
        headers = self.forwarded()
        async with httpx.AsyncClient(timeout=client.timeout) as visitor:
            page = await visitor.get(url, headers=headers)
            if page.status_code != 200:
                return page.status_code
            hidden = dict(re.findall(r'name="(csrfmiddlewaretoken|fg-[a-z-]+)" value="([^"]+)"', page.text))
            data = {**hidden, "email": f"soak{next(self.numbers)}@example.com", "note": "soak"}
            sent = await visitor.post(url, data=data, headers={**headers, "Referer": url})
        return 599 if sent.status_code == 200 else sent.status_code  # a 200 is the form back with an error

    async def chat(self, client) -> int:
        """A visitor's conversation of one message: the widget page (its token), the message, one poll."""
        url = self.web + urlsplit(self.urls["chat"]).path
        headers = self.forwarded()
        page = await client.get(url, headers=headers)
        if page.status_code != 200:
            return page.status_code
        token = re.search(r'data-token="([^"]+)"', page.text).group(1)
        headers["X-Chat-Token"] = token
        sent = await client.post(f"{url}/messages", json={"text": "hello"}, headers=headers)
        if sent.status_code != 201:
            return sent.status_code
        polled = await client.get(f"{url}/messages", params={"after": 0}, headers=headers)
        return 201 if polled.status_code == 200 else polled.status_code

    async def mcp(self, client) -> int:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "search_apps", "arguments": {"query": "crm", "limit": 10}},
        }
        headers = {
            **self.forwarded(),
            "Authorization": f"Bearer {TOKEN}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        answer = await client.post(f"{self.web}/mcp", json=body, headers=headers)
        if answer.status_code == 200 and answer.json().get("result", {}).get("isError", True):
            return 599
        return answer.status_code


def rss_of(pids: list[int]) -> dict[int, int]:
    """Resident set size in KiB of each process still alive."""
    found = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                found[pid] = int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))
        except (OSError, AttributeError):
            pass
    return found


def tree(root: int) -> list[int]:
    """The process and every descendant (gunicorn's workers, Celery's pool)."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True, check=True).stdout
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        pid, ppid = map(int, line.split())
        children.setdefault(ppid, []).append(pid)
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def counts(database: str) -> dict:
    command = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", COUNT, database]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


async def drive(load: Load, seconds: float, on_rss) -> None:
    # Idle connections are dropped before gunicorn's keep-alive (2 s) closes them: a request sent on a connection
    # the server is closing that moment would fail as no real client's retry lets it.
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=64, keepalive_expiry=1.0)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        runner = asyncio.create_task(load.run(client))
        await on_rss(seconds)
        load.stopping.set()
        await runner


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--database", default="flowgate_soak")
    parser.add_argument("--redis-db", default="10")
    parser.add_argument("--apps", type=int, default=2000)
    parser.add_argument("--only", default="", help="comma-separated route name prefixes (the others not asked)")
    args = parser.parse_args()

    port, hooks_port = args.port, args.port + 1
    env = bench_env(args.database, port)
    env.update(
        REDIS_URL=f"redis://127.0.0.1:6379/{args.redis_db}",
        TRUSTED_PROXY_COUNT="1",
        FORM_MIN_FILL_SECONDS="0",
        FORM_RATE_FORM="1000000/h",  # one form takes every POST of the run
        WEB_SERVICE_MONTHLY_QUOTA="100000000",
        LOG_LEVEL="WARNING",
    )
    subprocess.run(["redis-cli", "-n", args.redis_db, "flushdb"], check=True, capture_output=True)
    manage(env, "migrate", "--noinput")
    print(manage(env, "load_demo", "--apps", str(args.apps)).strip().splitlines()[-1])
    urls = json.loads(manage(env, "shell", "-c", SETUP.replace("TOKEN", repr(TOKEN))).strip().splitlines()[-1])
    host = f"127.0.0.1:{port}"
    processes = {
        "web": start_gunicorn(env, port),
        "hooks": start_gunicorn(env, hooks_port, app="config.asgi", asgi=True, host=host),
    }
    concurrency = os.environ.get("WORKER_CONCURRENCY", "2")
    for name in ("worker-1", "worker-2"):
        command = [PYTHON, "-m", "celery", "-A", "config", "worker", "-n", f"{name}@%h"]
        command += ["--concurrency", concurrency, "--loglevel", "WARNING"]
        processes[name] = subprocess.Popen(command, cwd=ROOT, env=env)
    processes["beat"] = subprocess.Popen(
        [PYTHON, "-m", "celery", "-A", "config", "beat", "--loglevel", "WARNING"], cwd=ROOT, env=env
    )
    seconds = args.minutes * 60
    rss_at = min(RSS_AT * 60, seconds / 5)
    early: dict[int, tuple[str, int]] = {}
    late: dict[int, int] = {}

    async def sample(total: float) -> None:
        await asyncio.sleep(rss_at)
        for name, process in processes.items():
            for pid, kib in rss_of(tree(process.pid)).items():
                early[pid] = (name, kib)
        await asyncio.sleep(total - rss_at)
        late.update(rss_of(list(early)))

    load = Load(f"http://127.0.0.1:{port}", f"http://127.0.0.1:{hooks_port}", host, urls, args.scale)
    if args.only:
        load.keep_only(args.only.split(","))
    problems: list[str] = []
    try:
        started = time.monotonic()
        asyncio.run(drive(load, seconds, sample))
        # Drain: the workers end every run; give up only when a minute passes with nothing more done.
        progress_at, last = time.monotonic(), None
        while time.monotonic() - progress_at < 60:
            found = counts(args.database)
            if found["not_done"] == 0 and found["unended"] == 0:
                break
            if (found["not_done"], found["unended"]) != last:
                progress_at, last = time.monotonic(), (found["not_done"], found["unended"])
            time.sleep(2)
        drained = time.monotonic() - started - seconds
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        for process in processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()

    found = counts(args.database)
    accepted = len(load.accepted)
    if found["deliveries"] < accepted:
        problems.append(f"lost: {accepted} webhooks answered 200, {found['deliveries']} delivery rows")
    if found["not_done"]:
        problems.append(f"{found['not_done']} deliveries did not end done")
    if found["unended"]:
        problems.append(f"{found['unended']} runs did not end")
    for route in load.routes.values():
        bad = {status: n for status, n in route.statuses.items() if not status.startswith(("2", "3"))}
        if bad:
            problems.append(f"{route.name}: {bad}")
    for pid, (name, kib) in sorted(early.items()):
        if pid not in late:
            problems.append(f"{name} process {pid} was gone at the end (replaced)")
        elif late[pid] > kib * (1 + RSS_GROWTH):
            problems.append(f"{name} process {pid}: RSS {kib} KiB after {rss_at / 60:.0f} min, {late[pid]} at the end")

    empty = load.routes["empty view (/healthz)"]
    print(f"\n{args.minutes:g} minutes at scale {args.scale:g}; drained {drained:.0f} s after the load stopped")
    print(f"{'route':<30} {'req':>8} {'median ms':>10} {'p99 ms':>8} {'p99 / empty':>12}  statuses")
    for route in load.routes.values():
        median = statistics.median(route.times) * 1000 if route.times else float("nan")
        p99 = percentile(route.times, 0.99) * 1000
        ratio = p99 / (percentile(empty.times, 0.99) * 1000)
        statuses = " ".join(f"{status}:{n}" for status, n in sorted(route.statuses.items()))
        requests = sum(route.statuses.values())
        print(f"{route.name:<30} {requests:>8} {median:>10.1f} {p99:>8.1f} {ratio:>12.1f}  {statuses}")
    print(f"\nwebhooks answered 200: {accepted}; delivery rows: {found['deliveries']}; runs: {found['runs']}")
    print(f"RSS (KiB) after {rss_at / 60:.1f} min and at the end:")
    for pid, (name, kib) in sorted(early.items(), key=lambda item: item[1][0]):
        end = late.get(pid)
        growth = f"{(end - kib) / kib:+.1%}" if end else "gone"
        print(f"  {name:<9} {pid:>7} {kib:>9} {end or '-':>9}  {growth}")
    with open("/proc/loadavg") as loadavg:
        print(f"load average at the end (1, 5, 15 min): {' '.join(loadavg.read().split()[:3])}")
    if problems:
        print("\nBROKEN:\n  " + "\n  ".join(problems))
        return 1
    print("\nevery guarantee held: zero lost, every run ended, no 5xx, RSS within 10%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
