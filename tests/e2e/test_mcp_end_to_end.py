"""The MCP server end to end: gunicorn, a real Celery worker and beat, and the official SDK's client.

The client connects over streamable HTTP with a token made in the database
(the OAuth flow that issues one is the authorization server's), once in the
SDK's default mode (server/discover, the 2026-07-28 era) and once in legacy
mode (the initialize handshake). It lists the tools, calls each one, and a
run started by run_automation ends in Execution History.
"""

import asyncio
import time

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types.version import LATEST_MODERN_VERSION

from automations.models import Automation, Run
from conftest import app_doc
from hooks.models import Delivery
from mcp_auth.tests.tokens import ALL_SCOPES, grant_mcp_tools, issue_token
from tests.e2e.stack import END_TO_END, Stack

pytestmark = END_TO_END

RECORD = [{"id": "note", "kind": "set_values", "values": {"seen": "{{trigger.body.n}}"}}]
DEFINITION = {"trigger": {"type": "webhook"}, "steps": RECORD}


@pytest.fixture
def stack(tmp_path):
    running = Stack(tmp_path, DELIVERY_SWEEP_SECONDS="1")
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


async def session(stack, http: httpx2.AsyncClient, mode: str) -> dict:
    """Everything the agent does through the SDK's client over http (which carries its token); returns what it
    saw (the test checks the database)."""
    seen: dict = {}
    async with http, Client(streamable_http_client(stack.base + "/mcp", http_client=http), mode=mode) as client:
        seen["version"] = client.protocol_version
        seen["tools"] = {tool.name: tool for tool in (await client.list_tools()).tools}

        async def call(name, arguments=None):
            result = await client.call_tool(name, arguments or {})
            seen.setdefault("calls", {})[name] = result
            assert not result.is_error, (name, result.content)
            return result.structured_content

        seen["apps"] = (await call("search_apps", {"query": "acme"}))["apps"]
        automation_id = (await call("list_automations"))["automations"][0]["automation_id"]
        seen["shown"] = await call("get_automation", {"automation_id": automation_id})
        started = await call("run_automation", {"automation_id": automation_id, "payload": {"n": 42}})
        seen["delivery_id"] = started["delivery_id"]
        deadline = time.monotonic() + 60
        while True:
            status = await call("get_run_status", {"delivery_id": started["delivery_id"]})
            if status["finished"] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        seen["status"] = status
        seen["runs"] = (await call("list_runs", {"automation_id": automation_id}))["runs"]
        await call("turn_off_automation", {"automation_id": automation_id})
        await call("turn_on_automation", {"automation_id": automation_id})
        seen["connections"] = (await call("list_connections"))["connections"]
        created = await call("create_automation", {"name": f"Built in {mode} mode", "definition": DEFINITION})
        await call("update_automation", {"automation_id": created["automation_id"], "name": f"Renamed in {mode}"})
        seen["created_id"] = created["automation_id"]
        bad = await client.call_tool("create_automation", {"name": "Broken", "definition": {"trigger": {}}})
        seen["bad"] = bad
    return seen


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_an_agent_uses_every_tool_through_the_sdk_client(stack, make_catalog, make_automation, owner, mode):
    make_catalog(app_doc("acme-crm", name="Acme CRM"))
    automation = make_automation(RECORD)
    grant_mcp_tools(owner)
    token, _ = issue_token(owner, scope=ALL_SCOPES, resource=[stack.base + "/mcp"])

    seen = asyncio.run(session(stack, create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}), mode))

    assert_every_tool_worked(seen, stack, automation, mode)


def assert_every_tool_worked(seen: dict, stack, automation, mode: str) -> None:
    if mode == "auto":
        assert seen["version"] == LATEST_MODERN_VERSION
    else:
        assert seen["version"] < "2026"
    assert len(seen["tools"]) == 11 and set(seen["calls"]) == set(seen["tools"])  # every tool, called
    assert seen["tools"]["get_automation"].annotations.read_only_hint is True
    assert seen["connections"] == []  # the owner has connected no app
    assert [app["slug"] for app in seen["apps"]] == ["acme-crm"]
    assert seen["shown"]["urls"]["webhook"].startswith(stack.hooks + "/automation-")
    assert seen["status"]["state"] == "succeeded", seen["status"]
    assert seen["status"]["run"]["steps"][0]["output"] == {"seen": 42}
    assert seen["runs"][0]["run_id"] == seen["status"]["run"]["run_id"]
    assert seen["bad"].is_error and seen["bad"].structured_content["errors"]
    # Execution History holds the run, started through the webhook path by the worker.
    delivery = Delivery.objects.get(public_id=seen["delivery_id"])
    run = Run.objects.get(automation=automation)
    assert delivery.run_id == run.pk and delivery.status == Delivery.Status.DONE
    assert run.status == Run.Status.SUCCEEDED and run.trigger["body"] == {"n": 42} and run.trigger["path"] == "/mcp"
    automation.refresh_from_db()
    assert automation.enabled is True
    assert Automation.objects.get(uuid=seen["created_id"]).name == f"Renamed in {mode}"


def test_the_sdk_client_without_a_token_is_told_to_sign_in(stack):
    response = httpx2.post(stack.base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith(
        f'Bearer resource_metadata="{stack.base}/.well-known/oauth-protected-resource/mcp"'
    )
    document = httpx2.get(stack.base + "/.well-known/oauth-protected-resource/mcp").json()
    assert document["resource"] == stack.base + "/mcp"
