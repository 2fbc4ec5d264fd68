"""Chat reply: answer the visitor in the conversation whose message started the run (the chat trigger).

Like n8n's "Respond to Chat" and Zapier Chatbots' reply: the text, with its
{{ paths }} filled, is added to the conversation as the widget's message and
reaches the visitor's open page at its next poll. A run may reply several
times; each reply is its own message. The conversation lives in interfaces/,
which automations does not import (STYLE.md 9): interfaces registers the
function that writes a reply with answer_with() in its AppConfig.ready().
"""

import json
from collections.abc import Callable

from automations.steps import StepFailed

KIND = "chat_reply"
MAX_CHARS = 4000

SCHEMA = {
    "type": "object",
    "required": ["text"],
    "properties": {"text": {"type": "string", "minLength": 1, "maxLength": MAX_CHARS}},
}

_answer: Callable[..., dict] | None = None


def answer_with(function: Callable[..., dict]) -> None:
    """function(conversation_id=..., text=...) writes the reply and returns the message as the step's output."""
    global _answer
    _answer = function


def run(settings: dict, context) -> dict:
    trigger = context.data["trigger"]
    conversation_id = trigger.get("conversation_id") if isinstance(trigger, dict) else None
    if not isinstance(conversation_id, str) or _answer is None:
        raise StepFailed("chat_reply answers only runs started by a chat message")
    value = settings["text"]  # a text that is one {{ path }} gives that value with its type
    if value is None:
        value = ""
    elif not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False)
    text = value.strip()[:MAX_CHARS]
    if not text:
        raise StepFailed("the reply is empty once its {{ paths }} are filled")
    output = _answer(conversation_id=conversation_id, text=text)
    if output is None:
        raise StepFailed("the conversation no longer exists")
    return output
