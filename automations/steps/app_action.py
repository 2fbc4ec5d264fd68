"""App action: one of a catalog app's actions, performed with one of the owner's connections to that app.

    {"id": "add_lead", "kind": "app_action", "app": "acorn-crm", "action": "create_lead",
     "connection": 12, "input": {"email": "{{trigger.body.email}}"}}

The call is the connector runtime's (connectors/calls.py): the operation's
endpoint, method and request template, the credential where the app reads
it, the HTTP step's address guard and deadline, 429 and 5xx asked again
within the time left. Its output is the app's answer, {status, headers,
body}. A connection that is not the owner's, not of that app, or needs
reconnection fails the step before any call; an app that refuses the
credential (401) marks the connection as needing reconnection, which the
owner sees on their connections page (docs/connections.md).
"""

from django.conf import settings
from django.utils import timezone

from automations.steps import StepFailed

KIND = "app_action"
SENDS_OUT = True  # its input leaves the service: trigger.path renders as requested

SCHEMA = {
    "type": "object",
    "required": ["app", "action", "connection"],
    "properties": {
        "app": {"type": "string", "minLength": 1, "maxLength": 64},
        "action": {"type": "string", "minLength": 1, "maxLength": 100},
        "connection": {"type": "integer", "minimum": 1},
        "input": {"type": "object"},
        "timeout_seconds": {"type": "number", "exclusiveMinimum": 0},
    },
}


def errors(settings_: dict) -> list[tuple[str, str]]:
    """The action must be one the catalog lists for that app (the connection is checked against the owner on save
    and before each call)."""
    from catalog.models import Operation

    found = Operation.objects.filter(app__slug=settings_["app"], key=settings_["action"]).values_list("kind", flat=True)
    kinds = set(found)
    if not kinds:
        return [(["action"], f"{settings_['app']!r} has no action {settings_['action']!r} in the catalog")]
    if "action" not in kinds:
        return [(["action"], f"{settings_['action']!r} is a trigger of {settings_['app']!r}, not an action")]
    return []


def run(settings_: dict, context) -> dict:
    from catalog.models import Operation
    from connections import keys, services
    from connections.models import Connection
    from connectors import calls

    connection = (
        Connection.objects.select_related("app")
        .filter(pk=settings_["connection"], owner_id=context.automation.owner_id, app__slug=settings_["app"])
        .first()
    )
    if connection is None:
        raise StepFailed(
            f"connection {settings_['connection']} is not one of this owner's connections to {settings_['app']!r}"
        )
    if connection.state != Connection.State.CONNECTED:
        raise StepFailed(f"the connection “{connection.label}” to {connection.app.name} needs reconnection")
    operation = Operation.objects.filter(app=connection.app, kind="action", key=settings_["action"]).first()
    if operation is None:
        raise StepFailed(f"{connection.app.name} has no action {settings_['action']!r} any more")
    wanted = min(
        float(settings_.get("timeout_seconds", settings.HTTP_STEP_TIMEOUT_SECONDS)), settings.HTTP_STEP_TIMEOUT_SECONDS
    )
    seconds = context.seconds_left(wanted)
    credential = keys.unseal(connection.credential_sealed) if connection.credential_sealed else None
    try:
        output = calls.perform(
            calls.operation_of(connection.app, operation),
            credential=credential,
            data=settings_.get("input") or {},
            seconds=seconds,
        )
    except calls.CallFailed as failed:
        if failed.output and failed.output["status"] == 401 and credential:
            services.needs_reconnection(connection=connection, problem=str(failed))
        raise StepFailed(str(failed), failed.output) from None
    Connection.objects.filter(pk=connection.pk).update(last_used_at=timezone.now())
    return output
