"""A worker killed after a form step mailed its one-time link, before the run was saved as waiting: the next worker
runs the step again and waits on the same link, and the person gets one mail (real worker, beat, SMTP conversation)."""

import json
import re
import socket
import threading
from urllib.parse import urlsplit

import httpx
import pytest

from automations import services as automation_services
from automations.models import Run, StepEffect
from publickeys.models import PublicKey
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END

STEPS = [
    {"id": "pause", "kind": "delay", "seconds": 1},  # so that a worker resumes the run, as after any wait
    {
        "id": "ask",
        "kind": "form",
        "title": "Approve the refund?",
        "email": "{{trigger.body.manager}}",
        "fields": [{"name": "amount", "type": "number", "required": True}],
    },
]


class MailServer:
    """An SMTP server standing in for the mail relay: it keeps every message, and answers QUIT only once released."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.messages: list[bytes] = []
        self.quit_asked = threading.Event()
        self.released = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conversation, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._converse, args=(conversation,), daemon=True).start()

    def _converse(self, conversation: socket.socket):
        with conversation, conversation.makefile("rb") as lines:
            conversation.sendall(b"220 mail.test ESMTP\r\n")
            for line in lines:
                verb = line[:4].upper()
                if verb == b"DATA":
                    conversation.sendall(b"354 go on\r\n")
                    message = b""
                    for part in lines:
                        if part == b".\r\n":
                            break
                        message += part
                    self.messages.append(message)
                    conversation.sendall(b"250 taken\r\n")
                elif verb == b"QUIT":
                    self.quit_asked.set()
                    self.released.wait(300)  # the worker is killed while it waits for this goodbye
                    conversation.sendall(b"221 bye\r\n")
                    return
                else:  # EHLO, MAIL, RCPT, RSET, NOOP
                    conversation.sendall(b"250 ok\r\n")

    def close(self):
        self.released.set()
        self.listener.close()


@pytest.fixture
def mail_server():
    server = MailServer()
    yield server
    server.close()


@pytest.fixture
def stack(tmp_path, mail_server):
    running = Stack(
        tmp_path,
        RUN_SWEEP_SECONDS="1",
        DELIVERY_SWEEP_SECONDS="1",
        RUN_LEASE_SECONDS="5",
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(mail_server.port),
        EMAIL_TIMEOUT="300",
    )
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


def test_a_worker_killed_after_mailing_the_link_leaves_one_mail_and_a_link_that_works(
    stack, mail_server, make_automation
):
    automation = make_automation(STEPS)
    url = stack.hooks + urlsplit(automation_services.hook_url(automation)).path
    body = json.dumps({"manager": "boss@example.com"}).encode()
    assert httpx.post(url, content=body, headers={"Content-Type": "application/json"}, timeout=30).status_code == 200
    # The worker that resumed the run after its delay has mailed the link and says goodbye to the mail server, which
    # holds its answer: the run is not saved as waiting yet. The worker dies there.
    assert mail_server.quit_asked.wait(90), f"the link to be mailed: {stack.log('worker')[-2000:]}"
    run = Run.objects.get()
    assert run.status == Run.Status.RUNNING
    stack.kill("worker")
    mail_server.released.set()
    stack.start_worker()

    def waits_for_the_person():
        current = Run.objects.get(pk=run.pk)
        return current.status == Run.Status.WAITING and (current.waiting_for or {}).get("step") == "ask" and current

    run = wait_until(waits_for_the_person, 90, message=f"the run to wait at ask: {stack.log('worker')[-2000:]}")
    assert run.lost_workers == 1  # the sweeper gave it back, and the step ran a second time
    assert len(mail_server.messages) == 1
    assert StepEffect.objects.get(run=run).data["mailed"] is True
    key = PublicKey.objects.get(purpose=PublicKey.Purpose.ONE_TIME_FORM, target_id=run.pk)
    assert key.retired_at is None and run.waiting_for["public_key_id"] == key.pk
    mailed = re.search(rb"(/form/s/[A-Za-z0-9_-]+)", mail_server.messages[0]).group(1).decode()
    page = httpx.get(stack.base + mailed, timeout=30)
    assert page.status_code == 200 and "Approve the refund?" in page.text
