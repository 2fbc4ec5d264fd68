"""Web service calls (SPEC 4.2, 7.3): run the automation while the caller waits and answer what it sets.

Decisions (docs/webhooks.md): the run happens in the web process, so the
caller gets its answer the moment the run ends. With no respond step, a run
that completed answers 200 {"status": "succeeded"|"stopped", "run_id": n}
and a failed one 500 {"error": "the automation failed", "run_id": n}. A run
still going at WEB_SERVICE_TIMEOUT_SECONDS starts no further step and
answers 504 {"error": "the automation did not answer in time"}. A run that
reaches a step that waits (a delay) answers what a respond step before it
set, or 202 {"status": "waiting", "run_id": n}; the run goes on in a worker.
"""

import json
import math
import time
import uuid
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from automations import engine, requested_path, runs, selectors
from automations import services as automation_services
from automations.exceptions import QuotaExceeded
from automations.models import Automation, Run
from edge.errors import error_reply
from edge.replies import Reply, json_reply
from hooks.exceptions import WebServiceInactive, WebServiceNotFound, WebServiceOverQuota
from hooks.incoming import Incoming
from hooks.trigger import trigger_data
from publickeys import selectors as key_selectors
from publickeys.models import PublicKey
from publickeys.redaction import redact

# Headers a respond step may not set: they belong to the connection, to CORS, or to the origin's security, which
# this service owns. The answer is any account holder's content served from the service's own origin: a cookie
# it set, a policy it loosened, or a page it let frame would act for whoever opens it.
_RESERVED = {
    "connection",
    "content-length",
    "transfer-encoding",
    "keep-alive",
    "upgrade",
    "trailer",
    "access-control-allow-origin",
    "access-control-allow-credentials",
    "set-cookie",
    "content-security-policy",
    "content-security-policy-report-only",
    "x-frame-options",
    "x-content-type-options",
    "strict-transport-security",
    "refresh",
}
# Whatever the step's Content-Type, its answer never runs as this origin: an HTML page is shown in an opaque origin,
# without scripts, forms or plug-ins (as n8n sandboxes a Respond to Webhook node's HTML), and never sniffed.
SANDBOXED = (("Content-Security-Policy", "sandbox"), ("X-Content-Type-Options", "nosniff"))


def _from_response(response: dict) -> Reply:
    headers = [(name, value) for name, value in response["headers"].items() if name.lower() not in _RESERVED]
    content_type = next((value for name, value in headers if name.lower() == "content-type"), None)
    headers = tuple((name, value) for name, value in headers if name.lower() != "content-type") + SANDBOXED
    body = response["body"]
    if isinstance(body, (dict, list, int, float, bool)) or body is None:
        return Reply(response["status"], headers, json.dumps(body).encode(), content_type or "application/json")
    return Reply(response["status"], headers, str(body).encode(), content_type or "text/plain; charset=utf-8")


def find(key: str) -> Automation:
    """The automation behind key, or WebServiceNotFound (404) or WebServiceInactive (503). Asked before the body
    is read, as a webhook's key is: a miss, or a key nobody holds, never costs reading up to HOOK_MAX_BODY_BYTES
    or holding a thread while a slow body trickles in."""
    automation = selectors.automation_for_web_service_key(key)
    if automation is None:
        raise WebServiceNotFound()
    if not automation.enabled:
        raise WebServiceInactive()
    return automation


def call(automation: Automation, incoming: Incoming, *, key: str = "") -> Reply:
    """Run the automation for this request, counted against its owner's monthly quota (WebServiceOverQuota).

    key: the URL's key, which steps that send trigger.path out get back in it (automations/requested_path.py).
    """
    claim = uuid.uuid4()
    try:
        run = _counted_start(automation, incoming, key, claim)
    except QuotaExceeded:
        raise WebServiceOverQuota(retry_after=seconds_to_next_month(timezone.now())) from None
    except IntegrityError:
        if Automation.objects.filter(pk=automation.pk).exists():
            raise
        raise WebServiceNotFound() from None  # deleted since it was found: its run's foreign key was refused
    try:
        return _advance(run, claim)
    except Exception as error:
        # A fault of ours (the database gone mid-call, a bug): the caller gets a 500 and keeps the call.
        automation_services.uncount_web_service_call(owner_id=automation.owner_id)
        if isinstance(error, IntegrityError) and not Automation.objects.filter(pk=automation.pk).exists():
            raise WebServiceNotFound() from None  # deleted mid-call
        raise


def seconds_to_next_month(now: datetime) -> int:
    """Until the quota counts afresh: the first of next month, in UTC as the count's months are."""
    month = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return math.ceil(((month + timedelta(days=32)).replace(day=1) - now).total_seconds())


def _counted_start(automation: Automation, incoming: Incoming, key: str, claim: uuid.UUID) -> Run:
    """The call counted and its run started in one transaction: one commit for both before any step runs, and a
    run that cannot start (its automation deleted since it was found) counts nothing."""
    trigger_key_id = None
    if key and requested_path.wanted(automation.definition):
        trigger_key_id = key_selectors.live_key_id_for_key(purpose=PublicKey.Purpose.WEB_SERVICE, key=key)
    trigger = trigger_data(
        body=incoming.body,
        content_type=incoming.content_type,
        query_string=incoming.query_string,
        path=redact(incoming.path),
    )
    with transaction.atomic():
        automation_services.count_web_service_call(owner_id=automation.owner_id)
        return runs.start(
            automation=automation,
            trigger=trigger,
            source=Run.Source.WEB_SERVICE,
            claim=claim,
            trigger_key_id=trigger_key_id,
        )


def _advance(run: Run, claim: uuid.UUID) -> Reply:
    deadline = time.monotonic() + settings.WEB_SERVICE_TIMEOUT_SECONDS
    try:
        response = engine.advance(run, deadline=deadline)
        # The outcome "timed out" is the clock's, not a reading of the failed step's text: a step cut short by
        # the time left (an HTTP request) fails with its own error, past the same deadline.
        timed_out = time.monotonic() >= deadline
        saved = runs.settle(run, claim)
    except Exception:
        runs.fail(run, claim, "internal error")
        raise
    if not saved:
        raise WebServiceNotFound()  # the automation, and its run with it, was deleted while the run went on
    if response is not None:
        return _from_response(response)
    if run.status == Run.Status.WAITING:
        return json_reply(202, {"status": run.status, "run_id": run.pk})
    if run.status == Run.Status.FAILED and timed_out:
        return error_reply(504, "the automation did not answer in time", run_id=run.pk)
    if run.status == Run.Status.FAILED:
        return error_reply(500, "the automation failed", run_id=run.pk)
    return json_reply(200, {"status": run.status, "run_id": run.pk})
