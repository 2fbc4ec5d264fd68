"""Rate limits of the chat widget (django-ratelimit): its messages, and loads of its page per visitor address.

Each visitor message counts, in the shared cache, against three limits: the
conversation's (a visitor typing fast, or a script on one token), the
widget's (all its visitors together: what one automation's runs may cost its
owner) and the visitor address's (catalog.ratelimits.client_key: one client
opening many conversations). A widget's trigger may set its own rates
(`limits`), the service's defaults being CHAT_RATE_CONVERSATION,
CHAT_RATE_WIDGET and CHAT_RATE_IP. Polls are not counted: each is one
indexed read, often a cache read alone, and counting it would cost as much.

Each load of a widget page (GET or HEAD /webchat/{key}, of any widget, key
found or not) counts against CHAT_RATE_PAGE_IP per visitor address: each load
signs a new conversation token, so a script looping on the page would mint
tokens (and cost a key lookup and a rendered page each) without limit.

A counter that cannot be reached lets the message through
(config/request_limits.py).
"""

from django.conf import settings
from django.http import HttpRequest

from catalog.ratelimits import client_key
from config import request_limits
from interfaces.chat import Widget
from interfaces.chat_tokens import Conversation


def retry_after(request: HttpRequest, *, widget: Widget, conversation: Conversation) -> int | None:
    """Count this message; None if it may go on, else the seconds until the limit it passed lets it."""
    own = widget.limits
    counters = (
        ("chat:ip", client_key(request), own.get("per_ip", settings.CHAT_RATE_IP)),
        ("chat:conversation", conversation.public_id.hex, own.get("per_conversation", settings.CHAT_RATE_CONVERSATION)),
        ("chat:widget", str(widget.automation.pk), own.get("per_widget", settings.CHAT_RATE_WIDGET)),
    )
    return request_limits.retry_after(request, counters, what="chat message")


def page_retry_after(request: HttpRequest) -> int | None:
    """Count this load of a widget page against the visitor address's limit; None while under it, else seconds."""
    counters = [("chat-page:ip", client_key(request), settings.CHAT_RATE_PAGE_IP)]
    return request_limits.retry_after(request, counters, what="chat page")
