"""The low-rate limits (django-ratelimit) in one table: sign-in, account mail, forms, chat, approvals, OAuth.

Each counted request adds one to fixed-window counters in the shared cache
(Redis in production), one per (group, identity). Every policy below lists
its counters in the order they are counted; counting stops at the first
limit passed, so a refused request does not also use up the allowance of the
counters after it. Each counter's identity is the client (edge/clients.py:
TRUSTED_PROXY_COUNT, IPv6 per /64), or a value the caller names: a user
name, a conversation, a widget, or "all" for one counter per scope.
Its rate is a setting, which an automation's own `limits` may replace under
the counter's `own` name (a form's per_ip, a widget's per_conversation).

A counter that cannot be reached lets the request through, with a warning:
an outage of Redis must not lock staff out of admin, close every form or
silence every widget; these limits slow abuse down, they guard no secret.
RATELIMIT_ENABLE=0 turns them all off, with the feed's. The feed keeps a
limiter of its own (catalog/ratelimits.py, docs/architecture.md).
"""

import logging
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from edge.clients import client_key

logger = logging.getLogger(__name__)
CLIENT = "client"


@dataclass(frozen=True)
class Counter:
    group: str  # the counter's name in the cache; "{scope}" is replaced by the caller's scope
    identity: str  # CLIENT, or the name of a value the caller passes
    rate_setting: str  # the setting holding the default rate, such as "20/10m"
    own: str | None = None  # the key of an automation's own `limits` that replaces the default


POLICIES: dict[str, tuple[Counter, ...]] = {
    # Password attempts, admin's and /login's in the same groups (accounts/sign_in.py). The price of the per-name
    # limit: someone guessing at a name locks its owner out until the window ends.
    "sign-in attempt": (
        Counter("sign-in:ip", CLIENT, "SIGN_IN_RATE_IP"),
        Counter("sign-in:username", "username", "SIGN_IN_RATE_USERNAME"),
    ),
    # Every POST that may send a mail to an address: sign-up, the confirmation link sent again, password reset
    # (accounts/). Per client, and per address, folded to lower case, so that nobody fills another's inbox.
    "account mail": (
        Counter("account-mail:ip", CLIENT, "ACCOUNT_MAIL_RATE_IP"),
        Counter("account-mail:address", "address", "ACCOUNT_MAIL_RATE_ADDRESS"),
    ),
    # Every POST of a hosted form, a form session's form or a one-time form, valid or not, before its body is read.
    "form submission": (
        Counter("form-ip:{scope}", CLIENT, "FORM_RATE_IP", own="per_ip"),
        Counter("form:{scope}", "all", "FORM_RATE_FORM", own="per_form"),
    ),
    # Each visitor message: a visitor typing fast or a script on one token, what one automation's runs may cost
    # its owner, one client opening many conversations. Polls are not counted: each is one indexed read.
    "chat message": (
        Counter("chat:ip", CLIENT, "CHAT_RATE_IP", own="per_ip"),
        Counter("chat:conversation", "conversation", "CHAT_RATE_CONVERSATION", own="per_conversation"),
        Counter("chat:widget", "widget", "CHAT_RATE_WIDGET", own="per_widget"),
    ),
    # Each load of a widget page, of any widget, found or not: each signs a new conversation token.
    "chat page": (Counter("chat-page:ip", CLIENT, "CHAT_RATE_PAGE_IP"),),
    # Approval pages and their JSON API, pages and decisions alike.
    "approvals": (Counter("approvals", CLIENT, "APPROVAL_RATE_IP"),),
    # An MCP client registers once when a user adds the server: a few an hour from one address is plenty.
    "client registration": (Counter("oauth-register:ip", CLIENT, "OAUTH_REGISTRATION_RATE_IP"),),
}


def retry_after(
    request: HttpRequest, policy: str, *, scope: str = "", own: dict | None = None, **identities: str
) -> int | None:
    """Count this request under the policy's counters; None while under every limit, else the seconds to wait."""
    counters = []
    for counter in POLICIES[policy]:
        if counter.identity == CLIENT:
            identity = client_key(request)
        else:
            identity = "all" if counter.identity == "all" else identities[counter.identity]
        rate = (own or {}).get(counter.own) or getattr(settings, counter.rate_setting)
        counters.append((counter.group.format(scope=scope), identity, rate))
    return count(request, counters, what=policy)


def count(request: HttpRequest, counters, *, what: str) -> int | None:
    """Count this request on each (group, identity, rate) in order; None while under every limit, else seconds.

    `what` names the counter in the warning logged when the cache cannot be reached.
    """
    for group, identity, rate in counters:
        try:
            usage = get_usage(
                request,
                group=group,
                key=lambda _group, _request, identity=identity: identity,
                rate=rate,
                method=get_usage.ALL,
                increment=True,
            )
        except Exception:  # noqa: BLE001 - whatever the cache raised
            logger.warning("%s counter unreachable; letting the request through", what, exc_info=True)
            return None
        if usage and usage["should_limit"]:
            return max(1, usage["time_left"])
    return None
