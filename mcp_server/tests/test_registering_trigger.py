"""The MCP builder tools turning on an automation whose app trigger registers itself: the app's refusal is the
tool's answer, and the automation stays off."""

import pytest

from automations.models import Automation
from connections.models import Registration
from connections.tests import other_app
from connections.tests.other_app import REFUSAL
from mcp_server.tests.test_tools import refused, structured

pytestmark = pytest.mark.django_db
SAID = f"Birch Forms did not register the webhook: Birch Forms answered 422: {REFUSAL}"


@pytest.fixture
def definition(make_catalog, birch, agent_user) -> dict:
    return other_app.definition(other_app.connect(agent_user, make_catalog, birch.base).pk)


def test_create_automation_on_says_why_the_app_refused_and_leaves_it_off(mcp, birch, definition):
    birch.refuse = True
    created = structured(mcp.call("create_automation", {"name": "R", "definition": definition, "enabled": True}))
    assert created["note"] == f"created, but it stays off: {SAID}"
    assert not Automation.objects.get(uuid=created["automation_id"]).enabled


def test_turn_on_automation_answers_with_the_apps_refusal_then_registers_once_it_accepts(mcp, birch, definition):
    created = structured(mcp.call("create_automation", {"name": "R", "definition": definition}))
    birch.refuse = True
    result = refused(mcp.call("turn_on_automation", {"automation_id": created["automation_id"]}))
    assert result["error"] == f"the automation stays off: {SAID}"
    assert not Automation.objects.get(uuid=created["automation_id"]).enabled
    birch.refuse = False
    structured(mcp.call("turn_on_automation", {"automation_id": created["automation_id"]}))
    assert Automation.objects.get(uuid=created["automation_id"]).enabled
    assert Registration.objects.get().state == Registration.State.ACTIVE and len(birch.hooks) == 1
