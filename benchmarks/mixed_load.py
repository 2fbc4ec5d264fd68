"""The mixed load of benchmarks/soak.py and tests/e2e/test_several_machines.py: every route at a steady rate.

Self-contained (httpx only), so that a test can import it as benchmarks.mixed_load.
"""

import asyncio
import itertools
import json
import random
import re
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

# Requests per second of each route at scale 1: about 70 a second in all, a busy small deployment's mix.
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
              {"id": "row", "kind": "lookup_rows", "table": "seen", "action": "upsert",
               "match": {"slot": "{{trigger.body.slot}}"}, "values": {"n": "{{trigger.body.n}}"}}]})
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
SLOTS = 1000
COUNT = """
SELECT json_build_object(
    'deliveries', (SELECT count(*) FROM hooks_delivery),
    'not_done', (SELECT count(*) FROM hooks_delivery WHERE status <> 'done'),
    'unended', (SELECT count(*) FROM automations_run WHERE status IN ('running', 'waiting')),
    'abandoned', (SELECT count(*) FROM automations_run WHERE status = 'abandoned'),
    'given_back', (SELECT count(*) FROM automations_run WHERE lost_workers > 0),
    'twice', (SELECT count(*) FROM (SELECT trigger->'body'->>'n' FROM automations_run
              WHERE status = 'succeeded' AND source = 'webhook' GROUP BY 1 HAVING count(*) > 1) AS twice),
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

    def __init__(self, web: str, hooks: str, urls: dict, scale: float, *, web_host: str, hooks_host: str):
        """web and hooks: where to connect; web_host and hooks_host: the Host each names (BASE_URL's, HOOKS_URL's)."""
        self.web, self.hooks, self.urls = web, hooks, urls
        self.web_host, self.hooks_host = web_host, hooks_host
        self.routes = {name: Route(name, rate * scale) for name, rate in ROUTES.items()}
        self.accepted: list[int] = []  # webhook bodies' n answered 200
        self.numbers = itertools.count(1)
        self.addresses = itertools.count(1)
        self.stopping = asyncio.Event()
        self.slugs: list[str] = []
        self.etags: dict[str, str] = {}

    def forwarded(self, host: str | None = None) -> dict:
        c = next(self.addresses) // 20  # 20 requests per client address, then the next
        return {"X-Forwarded-For": f"10.{(c >> 16) % 256}.{(c >> 8) % 256}.{c % 256}", "Host": host or self.web_host}

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

    def table(self) -> str:
        """Per route: requests, median and p99 in ms, p99 against the empty view's, and the answers by status."""
        empty = percentile(self.routes["empty view (/healthz)"].times, 0.99)
        lines = [f"{'route':<30} {'req':>8} {'median ms':>10} {'p99 ms':>8} {'p99 / empty':>12}  statuses"]
        for route in self.routes.values():
            median = statistics.median(route.times) * 1000 if route.times else float("nan")
            p99 = percentile(route.times, 0.99)
            statuses = " ".join(f"{status}:{n}" for status, n in sorted(route.statuses.items()))
            requests = sum(route.statuses.values())
            lines.append(
                f"{route.name:<30} {requests:>8} {median:>10.1f} {p99 * 1000:>8.1f} {p99 / empty:>12.1f}  {statuses}"
            )
        return "\n".join(lines)

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
        # A table of SLOTS rows, each written again and again: an hour adds no row past them (a table holds
        # at most 100,000, and one that grew by each webhook filled in 42 minutes at scale 1).
        body = json.dumps({"n": n, "slot": n % SLOTS, "pad": "x" * 1000})
        answer = await client.post(
            self.hooks + urlsplit(self.urls["hook"]).path,
            content=body,
            headers={**self.forwarded(self.hooks_host), "Content-Type": "application/json"},
        )
        if answer.status_code == 200:
            self.accepted.append(n)
        return answer.status_code

    async def web_service(self, client) -> int:
        n = next(self.numbers)
        answer = await client.post(
            self.hooks + urlsplit(self.urls["service"]).path, json={"n": n}, headers=self.forwarded(self.hooks_host)
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


def counts(database: str, *, host: str = "127.0.0.1") -> dict:
    """Deliveries and runs by what became of them, read with psql: no Django, no connection kept."""
    command = ["psql", "-h", host, "-U", "postgres", "-Atc", COUNT, database]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")
