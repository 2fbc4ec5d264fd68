"""Tools on a user's own automations: list them, show one with its URLs and definition, turn one on or off."""

import uuid

from automations import services
from automations.models import Automation
from automations.triggers import TriggerRefused
from mcp_server.tools import Tool, ToolError

AUTOMATION_ID = {
    "type": "string",
    "format": "uuid",
    "description": "The automation's id, as list_automations gives it.",
}
ID_ONLY = {
    "type": "object",
    "properties": {"automation_id": AUTOMATION_ID},
    "required": ["automation_id"],
    "additionalProperties": False,
}


def owned(user, automation_id: str) -> Automation:
    """The user's automation with this id; another account's looks exactly like one that does not exist."""
    try:
        key = uuid.UUID(automation_id)
    except (ValueError, TypeError, AttributeError):
        raise ToolError(f"no automation of yours has the id {automation_id!r}") from None
    automation = Automation.objects.filter(owner=user, uuid=key).first()
    if automation is None:
        raise ToolError(f"no automation of yours has the id {automation_id!r}")
    return automation


def summary(automation: Automation) -> dict:
    return {
        "automation_id": str(automation.uuid),
        "name": automation.name,
        "enabled": automation.enabled,
        "trigger_type": automation.definition.get("trigger", {}).get("type", "webhook"),
        "updated_at": automation.updated_at.isoformat(),
    }


def urls(automation: Automation) -> dict:
    """Its public URLs by purpose; each holds a key that is a password, shown to its owner only (as admin does)."""
    found = {
        "webhook": services.hook_url(automation),
        "web_service": services.web_service_url(automation),
        "form": services.form_url(automation),
        "chat_widget": services.chat_widget_url(automation),
    }
    return {purpose: url for purpose, url in found.items() if url}


def detail(automation: Automation) -> dict:
    return {**summary(automation), "urls": urls(automation), "definition": automation.definition}


def list_automations(user, arguments: dict) -> dict:
    return {"automations": [summary(automation) for automation in Automation.objects.filter(owner=user)]}


def get_automation(user, arguments: dict) -> dict:
    return detail(owned(user, arguments["automation_id"]))


def turn_on(user, arguments: dict) -> dict:
    """On: its kept deliveries are replayed; a trigger that refuses leaves it off and says why."""
    automation = owned(user, arguments["automation_id"])
    try:
        services.turn_on(automation=automation)
    except TriggerRefused as refusal:
        raise ToolError(f"the automation stays off: {refusal}") from None
    return summary(automation)


def turn_off(user, arguments: dict) -> dict:
    automation = owned(user, arguments["automation_id"])
    services.turn_off(automation=automation)
    return summary(automation)


TOOLS = (
    Tool(
        name="list_automations",
        title="List my automations",
        description="List your automations with their id, name, whether they are on, and their trigger type.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        call=list_automations,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="get_automation",
        title="Show an automation",
        description=(
            "Show one of your automations: whether it is on, its public URLs (webhook, web service, form, chat "
            "widget; each URL is a password, do not share it) and its definition document (trigger, steps, settings)."
        ),
        input_schema=ID_ONLY,
        call=get_automation,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="turn_on_automation",
        title="Turn an automation on",
        description=(
            "Turn one of your automations on: deliveries run again, and those kept while it was off are run in the "
            "order they arrived. If its trigger cannot be activated, it stays off and the reason is returned."
        ),
        input_schema=ID_ONLY,
        call=turn_on,
        read_only=False,
        idempotent=True,
    ),
    Tool(
        name="turn_off_automation",
        title="Turn an automation off",
        description=(
            "Turn one of your automations off. Deliveries that arrive while it is off are kept, not run, and are "
            "replayed when it is turned on again."
        ),
        input_schema=ID_ONLY,
        call=turn_off,
        read_only=False,
        idempotent=True,
    ),
)
