"""What other apps do when an automation is turned on or off, updated (definition, name, owner, URLs), reset or deleted.

Every event fires at one point: once the transaction that made the change
has committed (at once outside a transaction), so a listener never acts on
a change that is rolled back and may start its own transactions.

automations imports none of the apps that build on it (STYLE.md 9); they
register here in their AppConfig.ready() instead, e.g. hooks replays kept
deliveries when an automation is turned on.

"deleted" is heard for every automation row deleted, however it goes: the
service (automations.deletion), its owner's account deleted in admin or by
code, a queryset delete. The latter cascade through Django's collector and
pass no service, so the event is sent from the one point every delete
passes, Django's post_delete of the row (connected in AppConfig.ready()).
"""

import copy
from collections import defaultdict
from collections.abc import Callable

from django.db import transaction

EVENTS = ("turned_on", "turned_off", "updated", "reset", "deleted")
_listeners: dict[str, list[Callable]] = defaultdict(list)


def listen(event: str, listener: Callable) -> None:
    assert event in EVENTS, event
    if listener not in _listeners[event]:
        _listeners[event].append(listener)


def emit(event: str, automation) -> None:
    """Call the event's listeners with the automation once the current transaction commits."""
    assert event in EVENTS, event
    for listener in _listeners[event]:
        transaction.on_commit(lambda listener=listener: listener(automation), robust=True)


def row_deleted(sender, instance, **kwargs) -> None:
    """post_delete of an Automation: "deleted", with a copy that keeps its pk (the collector then clears the row's)."""
    emit("deleted", copy.copy(instance))
