"""What the interface suites share besides fixtures: approval steps, form fields, and how a test reaches them."""

import re
import struct
import zlib
from urllib.parse import urlsplit

from hooks import deliveries as hook_deliveries
from hooks import services as hook_services
from hooks.incoming import Incoming
from hooks.models import Delivery
from publickeys import selectors as key_selectors

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


FIELDS = [
    {"name": "email", "type": "email", "required": True},
    {"name": "topic", "type": "select", "options": ["sales", "support"], "required": True},
    {"name": "order", "type": "text", "required": True, "visible_if": {"field": "topic", "equals": "support"}},
    {"name": "ref", "type": "hidden"},
]


def form_path(automation) -> str:
    return urlsplit(key_selectors.url_of(purpose="form", target=automation)).path


def shown_token(client, path: str, **extra) -> str:
    """The signed time the form was shown at, as a browser would send it back."""
    page = client.get(path, **extra).content.decode()
    return re.search(r'name="fg-shown" value="([^"]+)"', page).group(1)


REPLY = [{"id": "answer", "kind": "chat_reply", "text": "You said: {{trigger.message}}"}]


def png(width: int = 1, height: int = 1, colour: tuple[int, int, int] = (255, 0, 0)) -> bytes:
    """A PNG of one colour: one pixel unless told, a logo's size for a screenshot."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = (b"\x00" + bytes(colour) * width) * height  # each row: filter "none", then its pixels
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
