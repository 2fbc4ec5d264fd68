"""Chat: a widget people talk to on a page of their own site; each visitor message runs the automation (SPEC 4.3).

As Zapier's Chatbots or n8n's Chat Trigger: the automation is given a chat
widget URL (/webchat/{key}) and an embed script for any page; a visitor's
message starts a run whose trigger data is the message, the conversation so
far and the conversation's id, and its chat_reply steps answer in that
conversation. The widget, its conversations and their limits live in
interfaces/ (docs/interfaces.md, "Chat widget"); nothing is registered
anywhere, so turning on and off only decides whether messages are taken.
"""

from automations.triggers.base import Trigger

# scheme://host[:port] as a browser writes a page's origin; a leading *. allows every subdomain.
ORIGIN = r"^https?://(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$"
RATE = r"^[1-9][0-9]{0,5}/(s|m|h|d)$"


class Chat(Trigger):
    TYPE = "chat"
    SCHEMA = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 80},
            "welcome": {"type": "string", "maxLength": 1000},
            # Pages allowed to frame the widget (its frame-ancestors); absent or ["*"]: any page.
            "allowed_origins": {
                "type": "array",
                "minItems": 1,
                "maxItems": 50,
                "items": {"anyOf": [{"const": "*"}, {"type": "string", "pattern": ORIGIN, "maxLength": 200}]},
            },
            # Visitor messages per conversation, per widget and per visitor address; absent: the service's defaults.
            "limits": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "per_conversation": {"type": "string", "pattern": RATE},
                    "per_widget": {"type": "string", "pattern": RATE},
                    "per_ip": {"type": "string", "pattern": RATE},
                },
            },
        },
    }
    URLS = ("chat_widget",)


TRIGGER = Chat()
