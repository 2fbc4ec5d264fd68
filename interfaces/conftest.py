"""Fixtures of the interface suites: approvals (an automation waiting at an approval step), forms and chat."""

import re
from urllib.parse import urlsplit

import pytest
from django.test import override_settings

from automations import services
from interfaces.tests.support import ASK_THEN_RECORD, FIELDS, REPLY, deliver
from publickeys import selectors as key_selectors
from publickeys.models import PublicKey


@pytest.fixture
def approval_automation(make_automation):
    return make_automation(ASK_THEN_RECORD)


@pytest.fixture
def waiting_run(approval_automation):
    return deliver(approval_automation)


@pytest.fixture
def queue_path(waiting_run):
    """The approval link's path and query, as the test client takes it."""
    from interfaces.approvals import queues

    url = queues.approval_url(queues.queue_of(waiting_run.automation))
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


@pytest.fixture(autouse=True)
def _forms_settings(tmp_path):
    with override_settings(FORM_MIN_FILL_SECONDS=0, MEDIA_ROOT=str(tmp_path / "uploads")):
        yield


@pytest.fixture
def make_form(owner):
    """A hosted-form automation (on unless told): its trigger settings and steps."""

    def make(steps=(), *, enabled=True, user=None, **trigger):
        definition = {"trigger": {"type": "form", "fields": FIELDS, **trigger}, "steps": list(steps), "settings": {}}
        return services.create_automation(owner=user or owner, name="A form", definition=definition, enabled=enabled)

    return make


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
