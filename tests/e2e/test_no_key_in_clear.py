"""No key in clear in the database or any log line (DESIGN.md contracts 3 and 7), with the whole service running.

The web process (gthread) and the hooks process (asyncio) with access logs
on, a worker and beat, on PostgreSQL and Redis. Both take webhooks at both
prefixes (one percent-encoded as a sender may write it), web service calls
(one answering 503, which django.request logs), malformed requests that
gunicorn logs, Celery messages whose arguments carry a key, and OAuth
tokens, codes and secrets sent in URLs (the token is revoked on sight). Then a
pg_dump of the whole database and every log file are searched for each key
as issued; the sealed copies are encrypted and do not match.
"""

import shutil
import socket
import subprocess
from urllib.parse import urlsplit

import httpx
import pytest
from django.db import connection
from oauth2_provider.models import AccessToken

from automations import services as automation_services
from config.celery import app
from hooks.models import Delivery
from mcp_auth.tests.tokens import grant_mcp_tools, issue_token
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END

# gunicorn's default access log format, and the decoded path (%(U)s) an operator may add.
ACCESS_LOG = "--access-logfile - --access-logformat " + (
    """'%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(U)s'"""
)
ECHO_PATH = [{"id": "answer", "kind": "respond", "body": {"path": "{{trigger.path}}"}}]
RECORD_PATH = [
    {"id": "seen", "kind": "set_values", "values": {"path": "{{trigger.path}}"}},
    {
        "id": "row",
        "kind": "lookup_rows",
        "table": "paths",
        "scope": "account",
        "action": "add",
        "values": {"path": "{{trigger.path}}"},
    },
]


# The keys of forms, one-time forms, form sessions, chat widgets and approval queues, in their URLs.
PAGE_KEY = "pK7-page_key_never_issued_0123456"
PAGE_KEY_URLS = [
    "/form/{key}",
    "/form/s/{key}",
    "/form/run/{key}",
    "/webchat/{key}",
    "/webchat/embed.js?key={key}",
    "/moderation?queue={key}",
    "/moderation/api?queue={key}",
    "/moderation/api?x=1&queue={key}",
]


@pytest.fixture
def stacks(tmp_path):
    """Two setups, each logging to its own folder: web and hooks processes with the worker and beat, as the Procfile
    runs them ("web"), and one hooks process serving every host ("hooks")."""
    started = {}
    for name in ("web", "hooks"):
        (tmp_path / name).mkdir()
        started[name] = Stack(tmp_path / name, GUNICORN_CMD_ARGS=ACCESS_LOG)
    try:
        started["web"].start_web()
        started["hooks"].start_web(hooks_process=True)
        started["web"].start_worker()
        started["web"].start_beat()
        yield started
    finally:
        for stack in started.values():
            stack.stop()


def key_in(url: str) -> str:
    path = urlsplit(url).path
    return path.partition("/automation-" if "/automation-" in path else "/webservice-")[2]


def raw_request(port: int, data: bytes) -> bytes:
    """Send bytes as they are (no client fixes them up) and read the answer until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(data)
        answer = b""
        try:
            while chunk := client.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return answer


def database_dump() -> str:
    database = connection.settings_dict
    assert shutil.which("pg_dump"), "pg_dump comes with PostgreSQL's client programs"
    command = ["pg_dump", "--data-only", "--no-owner", database["NAME"]]
    for option, value in (("-h", database["HOST"]), ("-p", database["PORT"]), ("-U", database["USER"])):
        command += [option, str(value)] if value else []
    env = {"PGPASSWORD": database["PASSWORD"]} if database.get("PASSWORD") else {}
    return subprocess.run(
        command, check=True, capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin", **env}
    ).stdout


# OAuth credentials a client put in a URL: the access log writes the URL, and the token is revoked on sight.
CODE, SECRET = "cD4-code_never_issued_0123456789a", "sE5-secret_never_issued_012345678"


def test_no_key_is_in_clear_in_the_database_or_any_log_line(stacks, make_automation, owner, tmp_path):
    hook = make_automation(RECORD_PATH, name="hook")
    service = make_automation(ECHO_PATH, name="service")
    refusing = make_automation([{"id": "answer", "kind": "respond", "status": 503, "body": "closed"}], name="refusing")
    hook_key = key_in(automation_services.hook_url(hook))
    service_key = key_in(automation_services.web_service_url(service))
    refusing_key = key_in(automation_services.web_service_url(refusing))
    keys = {"hook": hook_key, "service": service_key, "refusing": refusing_key}

    accepted = 0
    for stack in stacks.values():
        for path in (f"/automation-{hook_key}", f"/webhook/automation-{hook_key}", f"/%61utomation%2D{hook_key}"):
            body = f'{{"n": {accepted}}}'  # bodies differ: identical ones would be suppressed as duplicates
            answer = raw_request(
                stack.hooks_port,
                (
                    f"POST {path}?n=1 HTTP/1.1\r\nHost: 127.0.0.1:{stack.hooks_port}\r\n"
                    f"Content-Type: application/json\r\n"
                    f"Referer: {stack.hooks}/webservice-{service_key}\r\nContent-Length: {len(body)}\r\n"
                    f"Connection: close\r\n\r\n{body}"
                ).encode(),
            )
            assert answer.startswith(b"HTTP/1.1 200"), answer
            accepted += 1
        response = httpx.post(f"{stack.hooks}/webservice-{service_key}", json={}, timeout=30)
        assert response.json() == {"path": f"/webservice-{service_key}"}  # to its caller, as requested; stored redacted
        assert httpx.post(f"{stack.hooks}/webservice-{refusing_key}", json={}, timeout=30).status_code == 503
        for path in (f"/automation-{hook_key}", f"/webservice-{service_key}"):
            # A chunk size that is no number: whatever the answer, nothing logged about it may hold the key.
            raw_request(
                stack.hooks_port,
                (
                    f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{stack.hooks_port}\r\nTransfer-Encoding: chunked\r\n"
                    "Connection: close\r\n\r\nzz\r\n"
                ).encode(),
            )
        # A request line gunicorn refuses, and logs with the line in it.
        for port in {stack.port, stack.hooks_port}:
            raw_request(port, f"POST /automation-{hook_key}\x7f HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        # Every other URL that carries a key, with one issued to nothing: the access log line is what matters.
        for shape in PAGE_KEY_URLS:
            httpx.request("POST" if "/api" in shape else "GET", stack.base + shape.format(key=PAGE_KEY), timeout=30)
    keys["page"] = PAGE_KEY
    grant_mcp_tools(owner)
    for name, stack in stacks.items():
        # The web process's gunicorn (and, in the "hooks" setup, the hooks process's uvicorn) logs each URL.
        token, _ = issue_token(owner)
        keys[f"{name} token"] = token
        for base in {stack.base, stack.hooks}:
            query = f"access_token={token}&code={CODE}&client_secret={SECRET}&refresh_token={token}"
            httpx.post(f"{base}/mcp?{query}", json={}, timeout=30)
            httpx.get(f"{base}/catalog/v1/apps?code_verifier={SECRET}&Access_Token={token}", timeout=30)
        response = httpx.post(f"{stack.base}/mcp", headers={"Authorization": f"Bearer {token}"}, json={}, timeout=30)
        assert response.status_code == 401  # revoked: a URL is in logs on its way, proxies' too
    keys |= {"code": CODE, "secret": SECRET}
    failing = app.send_task("hooks.process_delivery", args=[f"/automation-{hook_key}"])
    app.send_task("flowgate.no_such_task", args=[f"/webservice-{service_key}"])  # the worker logs the whole message

    def statuses():
        return sorted(Delivery.objects.filter(automation=hook).values_list("status", "error"))

    try:
        wait_until(lambda: statuses() == [("done", "")] * accepted, 60, message="every accepted webhook to run")
    except AssertionError:
        raise AssertionError(statuses()) from None
    wait_until(
        lambda: (
            f"{failing.id}] raised" in stacks["web"].log("worker")
            or f"{failing.id}] succeeded" in stacks["web"].log("worker")
        ),
        60,
        message="the worker to run the task",
    )
    wait_until(lambda: "flowgate.no_such_task" in stacks["web"].log("worker"), 60, message="the unregistered message")
    wait_until(lambda: "Invalid request from ip" in stacks["web"].log("web"), 30, message="gunicorn's error line")
    for stack in stacks.values():
        stack.stop()

    dump = database_dump()
    logs = {str(path.relative_to(tmp_path)): path.read_text(errors="replace") for path in tmp_path.rglob("*.log")}
    assert {"web/web.log", "web/hooks.log", "web/worker.log", "web/beat.log", "hooks/web.log"} <= set(logs)
    for name, key in keys.items():
        assert key not in dump, f"the {name} key is in the database"
        for log, text in logs.items():
            assert key not in text, f"the {name} key is in {log}"

    # What was searched did hold those paths, with the keys replaced.
    for stored in ("/automation-{key}", "/webhook/automation-{key}"):
        assert stored in dump
    assert '"path": "/webservice-{key}"' in dump
    for log in ("web/hooks.log", "hooks/web.log"):  # the hooks process's, as the Procfile runs it and alone
        # Its access line names the decoded path: /%61utomation%2D{key} is logged as /automation-{key}.
        assert logs[log].count('"POST /automation-{key}?n=1 HTTP/1.1" 200') == 2, logs[log]
        assert "/webservice-{key}" in logs[log]
    assert "Invalid HTTP request line: 'POST /automation-{key}\\x7f HTTP/1.1'" in logs["web/web.log"]
    assert any("Service Unavailable: /webservice-{key}" in logs[log] for log in ("web/hooks.log", "hooks/web.log"))
    assert "/webservice-{key}" in logs["web/worker.log"]
    for log in ("web/web.log", "hooks/web.log"):
        for shape in PAGE_KEY_URLS:
            assert shape in logs[log], (shape, log)
        assert (
            "/mcp?access_token={redacted}&code={redacted}&client_secret={redacted}&refresh_token={redacted}"
            in (logs[log])
        )
    assert not AccessToken.objects.exists()
