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

A counter that cannot be reached lets the message through (with a warning),
as sign-in does: an outage of Redis should not silence every widget.
RATELIMIT_ENABLE=0 turns these limits off with the others.
"""

import logging

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from catalog.ratelimits import client_key
from interfaces.chat import Widget
from interfaces.chat_tokens import Conversation

logger = logging.getLogger(__name__)


def retry_after(request: HttpRequest, *, widget: Widget, conversation: Conversation) -> int | None:
    """Count this message; None if it may go on, else the seconds until the limit it passed lets it."""
    own = widget.limits
    limits = (
        ("chat:ip", client_key(request), own.get("per_ip", settings.CHAT_RATE_IP)),
        ("chat:conversation", conversation.public_id.hex, own.get("per_conversation", settings.CHAT_RATE_CONVERSATION)),
        ("chat:widget", str(widget.automation.pk), own.get("per_widget", settings.CHAT_RATE_WIDGET)),
    )
    for group, identity, rate in limits:
        try:
            usage = get_usage(
                request, group=group, key=lambda group, request, identity=identity: identity, rate=rate, increment=True
            )
        except Exception:  # noqa: BLE001
            logger.warning("chat message counter unreachable; letting the message through", exc_info=True)
            return None
        if usage and usage["should_limit"]:
            return max(1, usage["time_left"])
    return None


def page_retry_after(request: HttpRequest) -> int | None:
    """Count this load of a widget page against the visitor address's limit; None while under it, else seconds."""
    try:
        usage = get_usage(
            request,
            group="chat-page:ip",
            key=lambda group, request: client_key(request),
            rate=settings.CHAT_RATE_PAGE_IP,
            method=get_usage.ALL,
            increment=True,
        )
    except Exception:  # noqa: BLE001
        logger.warning("chat page counter unreachable; letting the page load", exc_info=True)
        return None
    if usage and usage["should_limit"]:
        return max(1, usage["time_left"])
    return None
