"""Builder tools (scope mcp:automation_builder): create and change automations from the definition document.

The document is the one admin and import/export read and write, validated by
its one schema (automations/definition.py). A document with errors is a tool
result with isError listing every error with its path, so that an agent can
correct it and call again.
"""

from automations import definition as definitions
from automations import references, services
from automations.triggers import TriggerRefused
from mcp_server.tools import BUILDER_SCOPES, Tool, ToolError
from mcp_server.tools.automations import AUTOMATION_ID, detail, owned

NAME = {"type": "string", "minLength": 1, "maxLength": 200}
DEFINITION = {
    "type": "object",
    "description": (
        "The definition document: {trigger: {type, ...}, steps: [{id, kind, ...}], settings: {...}}; see "
        "docs/automations.md. Steps refer to data as {{trigger.body.x}} or {{steps.<id>.<field>}}."
    ),
}


def _checked(document: dict, user) -> dict:
    """The document, or a ToolError with every error and its path: the schema's, then the connections its app steps
    name that are not the user's."""
    problems = definitions.errors(document) or references.owner_errors(document, user.pk)
    if problems:
        errors = [{"path": path, "message": message} for path, _, message in (p.partition(": ") for p in problems)]
        raise ToolError(f"the definition has {len(errors)} error(s); correct them and call again", errors)
    return document


def create_automation(user, arguments: dict) -> dict:
    """Created off unless asked; a trigger that refuses to turn on leaves it created and off, and says why."""
    document = _checked(arguments["definition"], user)
    try:
        automation = services.create_automation(
            owner=user, name=arguments["name"], definition=document, enabled=arguments.get("enabled", False)
        )
    except TriggerRefused as refusal:
        return {**detail(refusal.automation), "note": f"created, but it stays off: {refusal}"}
    return detail(automation)


def update_automation(user, arguments: dict) -> dict:
    automation = owned(user, arguments["automation_id"])
    document = _checked(arguments["definition"], user) if "definition" in arguments else None
    try:
        services.update_automation(automation=automation, name=arguments.get("name"), definition=document)
    except TriggerRefused as refusal:
        raise ToolError(f"nothing was changed: the new trigger refused to turn on: {refusal}") from None
    automation.refresh_from_db()
    return detail(automation)


def list_connections(user, arguments: dict) -> dict:
    """The user's connections, each with its app's actions and triggers by the key an app step names.

    Keys, names and descriptions only: never an endpoint, a request template or a credential (docs/connections.md).
    """
    from catalog.models import Operation
    from connections.models import Connection

    connections = list(Connection.objects.filter(owner=user).select_related("app"))
    operations: dict[int, dict[str, list]] = {}
    listed = Operation.objects.filter(app__in={c.app_id for c in connections}, listed=True).order_by("position", "pk")
    for operation in listed:
        kinds = operations.setdefault(operation.app_id, {"actions": [], "triggers": []})
        shown = {"key": operation.key, "name": operation.name, "description": operation.description}
        kinds["actions" if operation.kind == Operation.Kind.ACTION else "triggers"].append(shown)
    return {
        "connections": [
            {
                "connection": connection.pk,
                "label": connection.label,
                "app": connection.app.slug,
                "app_name": connection.app.name,
                "state": connection.state,
                **operations.get(connection.app_id, {"actions": [], "triggers": []}),
            }
            for connection in connections
        ],
        "usage": (
            'An app_action step: {"id": "...", "kind": "app_action", "app": <app>, "action": <an action\'s key>, '
            '"connection": <connection>, "input": {...}}. Connect more apps on your connections page.'
        ),
    }


TOOLS = (
    Tool(
        name="list_connections",
        title="List your connections",
        description=(
            "Your connected accounts on other apps, each with its id, its app, its state and the app's actions and "
            "triggers by key: what an app_action step names. Credentials are never shown."
        ),
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        call=list_connections,
        read_only=True,
        idempotent=True,
        scopes=BUILDER_SCOPES,
    ),
    Tool(
        name="create_automation",
        title="Create an automation",
        description=(
            "Create an automation from a name and a definition document (trigger, steps, settings). It is created "
            "off unless enabled is true. If the document is invalid nothing is created, and every error comes back "
            "with its path (such as $.steps[0].url) so it can be corrected. Returns the automation with its URLs."
        ),
        input_schema={
            "type": "object",
            "properties": {"name": NAME, "definition": DEFINITION, "enabled": {"type": "boolean", "default": False}},
            "required": ["name", "definition"],
            "additionalProperties": False,
        },
        call=create_automation,
        read_only=False,
        scopes=BUILDER_SCOPES,
    ),
    Tool(
        name="update_automation",
        title="Change an automation",
        description=(
            "Rename one of your automations or replace its definition document (the whole document: trigger, steps, "
            "settings). If the document is invalid nothing changes, and every error comes back with its path. Runs "
            "already started go on with the definition they started with."
        ),
        input_schema={
            "type": "object",
            "properties": {"automation_id": AUTOMATION_ID, "name": NAME, "definition": DEFINITION},
            "required": ["automation_id"],
            "additionalProperties": False,
        },
        call=update_automation,
        read_only=False,
        destructive=True,
        idempotent=True,
        scopes=BUILDER_SCOPES,
    ),
)
