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
owner sees on their connections page (docs/connections.md). An oauth_v2
connection's access token is refreshed first when it is about to expire,
and once after a 401, before the call is made once more
(connections/oauth.py).
"""

import time

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
    from connections import keys, oauth, services
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
    deadline = time.monotonic() + seconds
    signs_in = connection.auth_type == "oauth_v2"
    try:
        if signs_in:
            credential = oauth.access_token(connection, seconds=seconds)  # refreshed first when about to expire
        else:
            credential = keys.unseal(connection.credential_sealed) if connection.credential_sealed else None
        output = _perform(connection, operation, credential, settings_, deadline)
    except calls.CallFailed as failed:
        refused = failed.output and failed.output["status"] == 401 and credential
        if not refused:
            raise StepFailed(str(failed), failed.output) from None
        if not signs_in:
            services.needs_reconnection(connection=connection, problem=str(failed))
            raise StepFailed(str(failed), failed.output) from None
        output = _after_refusal(connection, operation, credential, settings_, deadline)
    except oauth.Failed as failed:
        raise StepFailed(_named(connection, failed)) from None
    Connection.objects.filter(pk=connection.pk).update(last_used_at=timezone.now())
    return output


def _named(connection, failed: Exception) -> str:
    """The refresh's failure, with the app's name before it when its words do not already name it."""
    said = str(failed)
    return said if connection.app.name in said else f"{connection.app.name}: {said}"


def _perform(connection, operation, credential, settings_: dict, deadline: float) -> dict:
    from connectors import calls

    left = deadline - time.monotonic()
    if left <= 0:
        raise StepFailed(f"{connection.app.name}: no time left for the call")
    return calls.perform(
        calls.operation_of(connection.app, operation),
        credential=credential,
        data=settings_.get("input") or {},
        seconds=left,
    )


def _after_refusal(connection, operation, refused: str, settings_: dict, deadline: float) -> dict:
    """An oauth_v2 app refused its access token (401): refreshed once and the call made once more; refused again,
    the connection needs reconnection."""
    from connections import oauth, services
    from connectors import calls

    try:
        credential = oauth.access_token(connection, seconds=max(deadline - time.monotonic(), 0.001), refused=refused)
        return _perform(connection, operation, credential, settings_, deadline)
    except oauth.Failed as failed:
        raise StepFailed(_named(connection, failed)) from None
    except calls.CallFailed as failed:
        if failed.output and failed.output["status"] == 401:
            services.needs_reconnection(connection=connection, problem=str(failed))
        raise StepFailed(str(failed), failed.output) from None
