"""Fixtures of the interface suites: approvals (an automation waiting at an approval step), forms and chat."""

import re
from urllib.parse import urlsplit

import pytest
from django.test import override_settings

from automations import services
from hooks import deliveries as hook_deliveries
from hooks import services as hook_services
from hooks.incoming import Incoming
from hooks.models import Delivery
from publickeys import selectors as key_selectors
from publickeys.models import PublicKey

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
    hook_deliveries.process_delivery(delivery_id=accepted.pk)
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


@pytest.fixture(autouse=True)
def _forms_settings(tmp_path):
    with override_settings(FORM_MIN_FILL_SECONDS=0, MEDIA_ROOT=str(tmp_path / "uploads")):
        yield


FIELDS = [
    {"name": "email", "type": "email", "required": True},
    {"name": "topic", "type": "select", "options": ["sales", "support"], "required": True},
    {"name": "order", "type": "text", "required": True, "visible_if": {"field": "topic", "equals": "support"}},
    {"name": "ref", "type": "hidden"},
]


@pytest.fixture
def make_form(owner):
    """A hosted-form automation (on unless told): its trigger settings and steps."""

    def make(steps=(), *, enabled=True, user=None, **trigger):
        definition = {"trigger": {"type": "form", "fields": FIELDS, **trigger}, "steps": list(steps), "settings": {}}
        return services.create_automation(owner=user or owner, name="A form", definition=definition, enabled=enabled)

    return make


def form_path(automation) -> str:
    return urlsplit(key_selectors.url_of(purpose="form", target=automation)).path


def shown_token(client, path: str, **extra) -> str:
    """The signed time the form was shown at, as a browser would send it back."""
    page = client.get(path, **extra).content.decode()
    return re.search(r'name="fg-shown" value="([^"]+)"', page).group(1)


REPLY = [{"id": "answer", "kind": "chat_reply", "text": "You said: {{trigger.message}}"}]


@pytest.fixture
def make_chat(owner):
    """A chat automation (on unless told) and its widget key: (automation, key)."""

    def make(steps=REPLY, *, enabled=True, user=None, **trigger):
        definition = {"trigger": {"type": "chat", **trigger}, "steps": list(steps)}
        automation = services.create_automation(
            owner=user or owner, name="Chat", definition=definition, enabled=enabled
        )
        return automation, key_selectors.key_of(purpose=PublicKey.Purpose.CHAT_WIDGET, target=automation)

    return make


@pytest.fixture
def open_widget(client):
    """Load the widget page as a visitor's browser does; returns the conversation token it was issued."""

    def open_(key: str) -> str:
        page = client.get(f"/webchat/{key}")
        assert page.status_code == 200
        return re.search(r'data-token="([^"]+)"', page.content.decode()).group(1)

    return open_
