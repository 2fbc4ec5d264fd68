"""Fixtures of the approval suites: an automation whose run waits at an approval step, and its queue's link."""

from urllib.parse import urlsplit

import pytest

from hooks import services as hook_services
from hooks.incoming import Incoming
from hooks.models import Delivery

ASK_THEN_RECORD = [
    {
        "id": "ask",
        "kind": "approval",
        "title": "Refund order {{trigger.body.order}}",
        "text": "Customer {{trigger.body.customer}} asks for {{trigger.body.amount}} EUR.",
        "details": {"order": "{{trigger.body.order}}"},
    },
    {
        "id": "log",
        "kind": "lookup_rows",
        "table": "decisions",
        "action": "add",
        "values": {"order": "{{trigger.body.order}}", "decision": "{{steps.ask.decision}}"},
    },
]


def deliver(automation, body: bytes = b'{"order": 7, "customer": "Ada", "amount": 30}'):
    """Run one webhook delivery in this process, as a worker would; returns its run."""
    accepted = hook_services.accept_delivery(
        automation_id=automation.pk, incoming=Incoming("POST", "/automation-k", "", "application/json", body)
    )
    hook_services.process_delivery(delivery_id=accepted.pk)
    return Delivery.objects.select_related("run").get(pk=accepted.pk).run


def steps_with(**ask_settings) -> list[dict]:
    return [{**ASK_THEN_RECORD[0], **ask_settings}, ASK_THEN_RECORD[1]]


@pytest.fixture
def approval_automation(make_automation):
    return make_automation(ASK_THEN_RECORD)


@pytest.fixture
def waiting_run(approval_automation):
    return deliver(approval_automation)


@pytest.fixture
def queue_path(waiting_run):
    """The approval link's path and query, as the test client takes it."""
    from interfaces import approvals

    url = approvals.approval_url(approvals.queue_of(waiting_run.automation))
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"
