"""Tools on runs: start one with a payload through the webhook path, follow it, and list recent runs.

run_automation hands the payload to hooks.services.accept_delivery, the
function a webhook request ends in: the delivery is stored before the tool
answers, a worker runs it, duplicate suppression applies to a payload
byte-identical to one that succeeded within the window, an automation that
is off keeps it for replay, and its run appears in Execution History. The
run does not exist yet when the tool answers, so the id it returns is the
delivery's (the X-Flowgate-Delivery-Id of a webhook); get_run_status follows
it to its run.
"""

import json
import uuid

from django.conf import settings

from automations import runs
from automations.models import Run
from hooks import intake, maintenance, services
from hooks.incoming import Incoming
from hooks.models import Delivery
from mcp_server.tools import Tool, ToolError
from mcp_server.tools.automations import AUTOMATION_ID, owned

# trigger.path of a run started here: steps can tell it from a webhook's /automation-{key}.
TRIGGER_PATH = "/mcp"
MAX_RUNS = 50


def run_data(run: Run) -> dict:
    return {
        "run_id": run.pk,
        "status": run.status,
        "source": run.source,
        "attempt": run.attempt,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "error": run.error or None,
        "suppressed_duplicates": run.suppressed_count,
        "steps": [
            {key: step.get(key) for key in ("id", "kind", "status", "output", "error") if key in step}
            for step in run.steps
        ],
    }


def list_runs(user, arguments: dict) -> dict:
    automation = owned(user, arguments["automation_id"])
    recent = Run.objects.filter(automation=automation).order_by("-started_at", "-pk")[: arguments.get("limit", 10)]
    return {"automation_id": str(automation.uuid), "runs": [run_data(run) for run in recent]}


def run_automation(user, arguments: dict) -> dict:
    automation = owned(user, arguments["automation_id"])
    trigger_type = automation.definition.get("trigger", {}).get("type", "webhook")
    if trigger_type != "webhook":
        raise ToolError(f"this automation starts from a {trigger_type} trigger; only webhook automations run here")
    if maintenance.active():
        raise ToolError("webhooks are in maintenance; try again later")
    # ASCII JSON: a lone surrogate is written as its escape, so any JSON value is bytes a webhook could send.
    body = json.dumps(arguments.get("payload", {}), separators=(",", ":"), allow_nan=False).encode()
    if len(body) > settings.HOOK_MAX_BODY_BYTES:
        raise ToolError(f"the payload is larger than {settings.HOOK_MAX_BODY_BYTES} bytes as JSON")
    incoming = Incoming(method="POST", path=TRIGGER_PATH, query_string="", content_type="application/json", body=body)
    try:
        accepted = services.accept_delivery(automation_id=automation.pk, incoming=incoming)
    except intake.AutomationGone:
        raise ToolError("the automation was deleted") from None
    return {
        "delivery_id": str(accepted.public_id),
        "state": "queued" if automation.enabled else "kept",
        "note": "follow it with get_run_status"
        if automation.enabled
        else "the automation is off: the payload is kept and runs when it is turned on",
    }


def get_run_status(user, arguments: dict) -> dict:
    try:
        public_id = uuid.UUID(arguments["delivery_id"])
    except ValueError:
        public_id = None
    delivery = (
        Delivery.objects.filter(public_id=public_id, automation__owner=user)
        .select_related("automation", "run", "suppressed_by")
        .first()
        if public_id
        else None
    )
    if delivery is None:
        raise ToolError(f"no run of yours has the delivery id {arguments['delivery_id']!r}")
    # Its latest attempt: the run it became, or that run's latest retry.
    run = delivery.run and (delivery.run.retries.order_by("-attempt").first() or delivery.run)
    state = delivery.status
    if state == Delivery.Status.PENDING:
        state = "queued" if delivery.automation.enabled else "kept"
    elif state == Delivery.Status.DONE and run:
        state = run.status
        if run.status == Run.Status.WAITING and (run.waiting_for or {}).get("kind") == runs.START:
            state = "retrying" if run.attempt > 1 else "queued"
    answer = {
        "delivery_id": str(delivery.public_id),
        "automation_id": str(delivery.automation.uuid),
        "state": state,
        "finished": state not in ("queued", "kept", "retrying", Run.Status.RUNNING, Run.Status.WAITING),
        "error": delivery.error or (run.error if run else "") or None,
        "run": run_data(run) if run else None,
    }
    if delivery.suppressed_by:
        answer["suppressed_by_run_id"] = delivery.suppressed_by_id
    return answer


TOOLS = (
    Tool(
        name="run_automation",
        title="Run an automation with a payload",
        description=(
            "Start one of your webhook automations with a JSON payload, as if it had been sent to its webhook URL "
            "(the payload becomes trigger.body). Answers at once with a delivery_id; the run happens in the "
            "background, so follow it with get_run_status. A payload identical to one that succeeded in the last "
            "10 minutes is suppressed as a duplicate (unless the automation turned that off); an automation that is "
            "off keeps the payload and runs it when turned on."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "automation_id": AUTOMATION_ID,
                "payload": {"description": "Any JSON value: the trigger's body.", "default": {}},
            },
            "required": ["automation_id"],
            "additionalProperties": False,
        },
        call=run_automation,
        read_only=False,
        destructive=False,
    ),
    Tool(
        name="get_run_status",
        title="Follow a run",
        description=(
            "Report how a run started by run_automation is going: queued, kept (the automation is off), running, "
            "waiting (for a person or a time), succeeded, stopped (by a condition), failed or suppressed, with each "
            "step's status, output and error once it has run."
        ),
        input_schema={
            "type": "object",
            "properties": {"delivery_id": {"type": "string", "description": "The id run_automation returned."}},
            "required": ["delivery_id"],
            "additionalProperties": False,
        },
        call=get_run_status,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        name="list_runs",
        title="List recent runs",
        description=(
            "List the most recent runs of one of your automations (Execution History), newest first, each with its "
            "status, error, and every step's status, output and error."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "automation_id": AUTOMATION_ID,
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RUNS, "default": 10},
            },
            "required": ["automation_id"],
            "additionalProperties": False,
        },
        call=list_runs,
        read_only=True,
        idempotent=True,
    ),
)
