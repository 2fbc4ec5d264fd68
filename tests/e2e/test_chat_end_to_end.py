"""The chat widget end to end: gunicorn, a Celery worker and beat on PostgreSQL and Redis, over HTTP."""

import re
from urllib.parse import urlsplit

import httpx
import pytest

from automations import services
from automations.models import Run
from interfaces.models import Message
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END

STEPS = [
    {"id": "look", "kind": "set_values", "values": {"count": "{{trigger.history}}"}},
    {"id": "answer", "kind": "chat_reply", "text": "You said: {{trigger.message}}"},
]


@pytest.fixture
def stack(tmp_path):
    running = Stack(tmp_path, RUN_SWEEP_SECONDS="1")
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


def chat_url(stack, automation) -> str:
    return stack.base + urlsplit(services.chat_widget_url(automation)).path


def test_a_visitor_message_gets_the_automations_reply_in_the_same_conversation_and_a_reload_keeps_it(stack, owner):
    automation = services.create_automation(
        owner=owner,
        name="Helpdesk",
        definition={"trigger": {"type": "chat", "title": "Helpdesk"}, "steps": STEPS},
        enabled=True,
    )
    url = chat_url(stack, automation)
    with httpx.Client(timeout=30) as browser:
        page = browser.get(url)
        assert page.status_code == 200 and "x-frame-options" not in page.headers
        token = re.search(r'data-token="([^"]+)"', page.text).group(1)
        headers = {"X-Chat-Token": token}

        def replies(after=0):
            found = browser.get(url + "/messages", params={"after": after}, headers=headers).json()["messages"]
            return [m for m in found if m["role"] == "bot"]

        assert browser.get(url + "/messages", headers=headers).json() == {"messages": []}
        sent = browser.post(url + "/messages", json={"text": "Where is my parcel?"}, headers=headers)
        assert sent.status_code == 201
        first = wait_until(lambda: replies(), 30, 0.2, f"the reply: {stack.log('worker')[-2000:]}")
        assert [m["text"] for m in first] == ["You said: Where is my parcel?"]

        browser.get(url)  # a reload: the page's script keeps its token, and with it the conversation
        browser.post(url + "/messages", json={"text": "Thanks"}, headers=headers)
        wait_until(lambda: len(replies()) == 2, 30, 0.2, "the second reply")
        texts = [(m["role"], m["text"]) for m in browser.get(url + "/messages", headers=headers).json()["messages"]]
        assert texts == [
            ("visitor", "Where is my parcel?"),
            ("bot", "You said: Where is my parcel?"),
            ("visitor", "Thanks"),
            ("bot", "You said: Thanks"),
        ]
    second = Message.objects.get(text="Thanks").run
    assert second.source == Run.Source.CHAT and second.status == Run.Status.SUCCEEDED
    assert [m["text"] for m in second.trigger["history"]] == ["Where is my parcel?", "You said: Where is my parcel?"]


def test_the_embed_script_and_the_frame_are_served_by_the_web_process(stack, owner):
    automation = services.create_automation(
        owner=owner,
        name="Framed",
        definition={"trigger": {"type": "chat", "allowed_origins": ["https://shop.example"]}, "steps": STEPS},
        enabled=True,
    )
    key = urlsplit(services.chat_widget_url(automation)).path.rsplit("/", 1)[1]
    script = httpx.get(f"{stack.base}/webchat/embed.js", params={"key": key}, timeout=30)
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    frame = httpx.get(f"{stack.base}/webchat/{key}", timeout=30)
    assert "frame-ancestors https://shop.example" in frame.headers["content-security-policy"]
    assert "x-frame-options" not in frame.headers
