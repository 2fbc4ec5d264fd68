"""Trigger kinds: one module per kind, each holding a Trigger subclass (base.py) and its one instance, TRIGGER.

Adding a kind is adding a module here: the schema and the services find it.
The services call the instance's hooks inside the transaction that turns
the automation on (activate), off (deactivate) or deletes it (delete; after
deactivate if it was on), so what they write commits or rolls back with
it. activate may raise TriggerRefused: the automation then stays as it was
(off, when it was being turned on) and the message reaches whoever turned
it on (admin, the import command, the MCP tools).
"""

import importlib
import pkgutil
from functools import cache

from automations.triggers.base import Trigger, TriggerRefused

__all__ = ["Trigger", "TriggerRefused", "of", "types"]


@cache
def types() -> dict[str, Trigger]:
    """Each trigger type's instance, by its TYPE."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name != "base":
            trigger = importlib.import_module(f"{__name__}.{info.name}").TRIGGER
            found[trigger.TYPE] = trigger
    return found


def of(automation) -> Trigger:
    """The automation's trigger, as its definition names it (a definition without one is a webhook's)."""
    return types()[automation.definition.get("trigger", {}).get("type", "webhook")]
