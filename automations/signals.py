"""Signals of automations for the apps that build on it (STYLE.md 9: automations imports none of them).

Lifecycle: turned_on, turned_off, updated, reset and deleted are sent with
the automation as `automation` once the transaction that made the change
has committed (at once outside one), so a receiver never acts on a change
that is rolled back and may start its own transactions. "deleted" is sent
for every automation row deleted, however it goes (the service, its owner's
account deleted, a queryset delete): from Django's post_delete of the row,
connected in AppConfig.ready().

Questions a step or a service asks while it works, answered by the app that
serves them (interfaces), through `answer()`:

- place_approval_item(run, title, text, details, expires_at): puts an item
  in the run's approval queue; answers {"item_id", "public_key_id"}.
- chat_reply(conversation_id, text): adds a reply to a conversation;
  answers the message as the step's output, or None if it is gone.
- url_origin(purpose, owner_id): the origin of an owner's URL of that
  purpose ("https://host", a white-label domain), or None for BASE_URL.
- public_urls(automation): every public URL the automation has, as lines
  to print ("webhook URL:     https://..."), its approval link made first
  when a step asks for approvals; the one list is the pages' own
  (interfaces/public_urls.py). None when no app answers.

sweep is sent by the one sweeper (automations.runs.sweep) after it has
queued due runs and given back lost ones: an app that holds work meant to
become runs (hooks' pending deliveries) queues what no task holds.
"""

import copy
import logging

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

turned_on = Signal()
turned_off = Signal()
updated = Signal()
reset = Signal()
deleted = Signal()
LIFECYCLE = (turned_on, turned_off, updated, reset, deleted)

place_approval_item = Signal()
chat_reply = Signal()
url_origin = Signal()
public_urls = Signal()

sweep = Signal()


def send_on_commit(signal: Signal, automation) -> None:
    """Send a lifecycle signal once the current transaction commits; a receiver that raises is logged, and the
    others still hear it."""
    transaction.on_commit(lambda: _send(signal, automation))


def _send(signal: Signal, automation) -> None:
    for receiver, response in signal.send_robust(sender=type(automation), automation=automation):
        if isinstance(response, Exception):
            logger.error("%r raised for automation %s", receiver, automation.pk, exc_info=response)


def answer(signal: Signal, **question):
    """The first answer a receiver gives that is not None, or None (no receiver, or none answered)."""
    for _, response in signal.send(sender=None, **question):
        if response is not None:
            return response
    return None


def row_deleted(sender, instance, **kwargs) -> None:
    """post_delete of an Automation: "deleted", with a copy that keeps its pk (the collector then clears the row's)."""
    send_on_commit(deleted, copy.copy(instance))
