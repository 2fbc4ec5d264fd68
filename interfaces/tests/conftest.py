"""Fixtures of the chat widget's tests: a chat automation and its widget key, and a visitor's page load."""

import re

import pytest

from automations import services
from publickeys.models import PublicKey
from publickeys.selectors import key_of

REPLY = [{"id": "answer", "kind": "chat_reply", "text": "You said: {{trigger.message}}"}]


@pytest.fixture
def make_chat(owner):
    """A chat automation (on unless told) and its widget key: (automation, key)."""

    def make(steps=REPLY, *, enabled=True, user=None, **trigger):
        definition = {"trigger": {"type": "chat", **trigger}, "steps": list(steps)}
        automation = services.create_automation(
            owner=user or owner, name="Chat", definition=definition, enabled=enabled
        )
        return automation, key_of(purpose=PublicKey.Purpose.CHAT_WIDGET, target=automation)

    return make


@pytest.fixture
def open_widget(client):
    """Load the widget page as a visitor's browser does; returns the conversation token it was issued."""

    def open_(key: str) -> str:
        page = client.get(f"/webchat/{key}")
        assert page.status_code == 200
        return re.search(r'data-token="([^"]+)"', page.content.decode()).group(1)

    return open_
