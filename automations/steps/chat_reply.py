"""Chat reply: answer the visitor in the conversation whose message started the run (the chat trigger).

Like n8n's "Respond to Chat" and Zapier Chatbots' reply: the text, with its
{{ paths }} filled, is added to the conversation as the widget's message and
reaches the visitor's open page at its next poll. A run may reply several
times; each reply is its own message. The conversation lives in interfaces/,
which automations does not import (STYLE.md 9): the step asks for the
reply through the signal automations.signals.chat_reply, which interfaces
answers.
"""

import json

from automations import signals
from automations.steps import StepFailed

KIND = "chat_reply"
MAX_CHARS = 4000

SCHEMA = {
    "type": "object",
    "required": ["text"],
    "properties": {"text": {"type": "string", "minLength": 1, "maxLength": MAX_CHARS}},
}


def run(settings: dict, context) -> dict:
    trigger = context.data["trigger"]
    conversation_id = trigger.get("conversation_id") if isinstance(trigger, dict) else None
    if not isinstance(conversation_id, str) or not signals.chat_reply.has_listeners():
        raise StepFailed("chat_reply answers only runs started by a chat message")
    value = settings["text"]  # a text that is one {{ path }} gives that value with its type
    if value is None:
        value = ""
    elif not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False)
    text = value.strip()[:MAX_CHARS]
    if not text:
        raise StepFailed("the reply is empty once its {{ paths }} are filled")
    output = signals.answer(signals.chat_reply, conversation_id=conversation_id, text=text)
    if output is None:
        raise StepFailed("the conversation no longer exists")
    return output
