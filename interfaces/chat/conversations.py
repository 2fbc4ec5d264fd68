"""The chat widget's business: finding a widget by its key, visitor messages that start runs, replies, polls.

A conversation's messages are numbered in the order they commit: every write
holds the conversation's row (FOR UPDATE) first, so a poll that asks for the
messages after the last one it has never skips one committed late. While it
holds that row, the write also records the conversation's last number in the
cache, so the sets follow the same order and the number only grows; a poll
that reads a number not yet committed asks again next time.
"""

import logging
import uuid
from dataclasses import dataclass

from django.core.cache import cache
from django.db import IntegrityError, transaction

from automations import runs, triggers
from automations.models import Automation, Run
from interfaces.chat import tokens
from interfaces.models import Conversation, Message
from publickeys.models import PublicKey
from publickeys.selectors import target_id_for_key

logger = logging.getLogger(__name__)

# Messages of the conversation a run is given (trigger.history), the latest ones; older ones stay on the page.
HISTORY_LIMIT = 50
# Messages one poll returns at most; the page asks again at once for the rest.
POLL_LIMIT = 100
# How long the cache keeps a conversation's last message number, as written, and as a poll found it in the
# database (shorter: a number found by a poll may miss a write whose cache entry was lost meanwhile).
_LAST_SECONDS = 3600
_FOUND_SECONDS = 10


class ChatUnavailable(Exception):
    """The widget's automation is off: no message is taken (the page says the chat is not available)."""


class ChatGone(Exception):
    """The widget's automation was deleted while its message was taken: nothing was stored (404, as for its key)."""


@dataclass(frozen=True)
class Widget:
    automation: Automation

    @property
    def settings(self) -> dict:
        trigger = self.automation.definition.get("trigger", {})
        return {name: value for name, value in trigger.items() if name != "type"}

    @property
    def title(self) -> str:
        return self.settings.get("title", "")

    @property
    def welcome(self) -> str:
        return self.settings.get("welcome", "")

    @property
    def allowed_origins(self) -> list[str]:
        """The pages that may frame the widget; ["*"] for any."""
        return list(self.settings.get("allowed_origins", ["*"]))

    @property
    def limits(self) -> dict:
        return dict(self.settings.get("limits", {}))


def automation_id_for_key(key: str) -> int | None:
    """The id of the automation whose chat widget URL ends in key: the one lookup of publickeys, nothing more.

    Enough for a poll: a deleted automation's keys go with it, and a trigger
    changed to another type retires its widget key.
    """
    return target_id_for_key(purpose=PublicKey.Purpose.CHAT_WIDGET, key=key)


def owner_id_of(automation_id: int) -> int | None:
    return Automation.objects.filter(pk=automation_id).values_list("owner_id", flat=True).first()


def widget_for_key(key: str) -> Widget | None:
    """The widget whose URL ends in key, or None: unknown, altered, retired, deleted, or no longer a chat trigger.

    A miss costs the one lookup of publickeys; a hit one query more.
    """
    automation_id = automation_id_for_key(key)
    if automation_id is None:
        return None
    automation = Automation.objects.filter(pk=automation_id).first()
    if automation is None or triggers.of(automation).TYPE != "chat":
        return None
    return Widget(automation)


def _message(message: Message) -> dict:
    return {"id": message.pk, "role": message.role, "text": message.text, "at": message.created_at.isoformat()}


def _last_key(public_id: uuid.UUID) -> str:
    return f"chat:last:{public_id.hex}"


def _remember_last(public_id: uuid.UUID, message_id: int) -> None:
    """Called with the conversation's row held; a cache that cannot be reached costs polls a query, nothing more."""
    try:
        cache.set(_last_key(public_id), message_id, _LAST_SECONDS)
    except Exception:  # noqa: BLE001
        logger.warning("chat: the cache could not record a conversation's last message", exc_info=True)


def send(*, widget: Widget, conversation: tokens.Conversation, text: str) -> dict:
    """_send, whose rows fail their foreign keys at commit when the automation was deleted meanwhile (ChatGone)."""
    try:
        return _send(widget=widget, conversation=conversation, text=text)
    except IntegrityError:
        if Automation.objects.filter(pk=widget.automation.pk).exists():
            raise
        raise ChatGone() from None


@transaction.atomic
def _send(*, widget: Widget, conversation: tokens.Conversation, text: str) -> dict:
    """Add the visitor's message and start its run, both committed together; the message as the page shows it.

    The run's trigger data: the message, the conversation before it (its
    latest HISTORY_LIMIT messages) and the conversation's id, which its
    chat_reply steps answer in. Raises ChatUnavailable when the automation is off.
    """
    automation = Automation.objects.filter(pk=widget.automation.pk, enabled=True).first()
    if automation is None:
        raise ChatUnavailable()
    row = _held_conversation(conversation.public_id, automation.pk)
    earlier = list(row.messages.order_by("-pk")[:HISTORY_LIMIT])[::-1]
    trigger = {
        "message": text,
        "history": [{"role": m.role, "text": m.text, "at": m.created_at.isoformat()} for m in earlier],
        "conversation_id": str(row.public_id),
    }
    run = runs.queue(automation=automation, trigger=trigger, source=Run.Source.CHAT)
    message = Message.objects.create(conversation=row, role=Message.Role.VISITOR, text=text, run=run)
    row.save(update_fields=["last_message_at"])
    _remember_last(row.public_id, message.pk)
    return _message(message)


def _held_conversation(public_id: uuid.UUID, automation_id: int) -> Conversation:
    """The conversation's row, locked until the transaction ends; made by its first message (a new row is ours)."""
    row = Conversation.objects.select_for_update().filter(public_id=public_id).first()
    if row is not None:
        return row
    try:
        with transaction.atomic():
            return Conversation.objects.create(public_id=public_id, automation_id=automation_id)
    except IntegrityError:  # the same visitor's other tab made it first
        return Conversation.objects.select_for_update().get(public_id=public_id)


@transaction.atomic
def reply(*, conversation_id: str, text: str) -> dict | None:
    """A chat_reply step's answer, added to its conversation; the message as the page shows it, None if gone."""
    try:
        public_id = uuid.UUID(conversation_id)
    except (TypeError, ValueError):
        return None
    row = Conversation.objects.select_for_update().filter(public_id=public_id).first()
    if row is None:
        return None
    message = Message.objects.create(conversation=row, role=Message.Role.BOT, text=text)
    # last_message_at is the visitor's last message: a reply does not write the conversation's row again.
    _remember_last(row.public_id, message.pk)
    return _message(message)


def messages_after(*, conversation: tokens.Conversation, after: int) -> list[dict]:
    """The conversation's messages after message number after, oldest first; [] for one with no message yet.

    An idle poll costs a cache read: the conversation's last number is
    remembered when a message is written, and nothing newer means no query.
    """
    key = _last_key(conversation.public_id)
    try:
        last = cache.get(key)
    except Exception:  # noqa: BLE001
        last = None
    if isinstance(last, int) and last <= after:
        return []
    found = list(
        Message.objects.filter(
            conversation__public_id=conversation.public_id,
            conversation__automation_id=conversation.automation_id,
            pk__gt=after,
        ).order_by("pk")[:POLL_LIMIT]
    )
    # What the query proves is the last number: the last it found (all of them), or 0 for no message at all.
    proven = found[-1].pk if 0 < len(found) < POLL_LIMIT else 0 if not found and after == 0 else None
    if last is None and proven is not None:
        try:  # add, never set: a write that recorded a newer number meanwhile keeps it
            cache.add(key, proven, _FOUND_SECONDS)
        except Exception:  # noqa: BLE001
            pass
    return [_message(message) for message in found]
