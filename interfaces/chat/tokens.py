"""Conversation tokens: the server's signed word that a visitor's page holds one conversation of one widget.

A widget page is opened with its URL key; each load issues a token naming a
new conversation (a random id) of that widget's automation, signed with
SECRET_KEY (django.core.signing, its own salt) and dated. The page's script
keeps it in the frame's storage and sends it in the X-Chat-Token header
with every message and poll, never in a URL; the conversation is the token's
and nothing else, so a visitor reaches no conversation but their own. A
token of another widget, altered, forged or older than
CHAT_TOKEN_MAX_AGE_SECONDS is refused (403).
"""

import uuid
from dataclasses import dataclass

from django.conf import settings
from django.core import signing

HEADER = "X-Chat-Token"
_SALT = "interfaces.chat.conversations.conversation"
# A token is about 100 characters; anything far longer is refused before its signature is checked.
_MAX_LENGTH = 300


class BadToken(Exception):
    """Not a token this service issued for this widget, or too old."""


@dataclass(frozen=True)
class Conversation:
    automation_id: int
    public_id: uuid.UUID


def issue(*, automation_id: int) -> str:
    """A token for a new conversation of this automation's widget: no row is written until its first message."""
    return signing.dumps({"a": automation_id, "c": uuid.uuid4().hex}, salt=_SALT, compress=False)


def read(token: str | None, *, automation_id: int) -> Conversation:
    """The conversation token names, if it is genuine, current and of this widget; else BadToken."""
    if not token or len(token) > _MAX_LENGTH or not token.isascii():
        raise BadToken()
    try:
        claims = signing.loads(token, salt=_SALT, max_age=settings.CHAT_TOKEN_MAX_AGE_SECONDS)
        conversation = Conversation(automation_id=int(claims["a"]), public_id=uuid.UUID(hex=claims["c"]))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise BadToken() from None
    if conversation.automation_id != automation_id:
        raise BadToken()
    return conversation
