"""Trigger types: one module per type, each exposing TYPE, SCHEMA, URLS and the hooks activate, deactivate, delete.

SCHEMA is the JSON schema of the trigger's own settings (every field of
`trigger` but `type`). URLS are the purposes of the public keys
(publickeys.models.PublicKey.Purpose) an automation with this trigger is
given: its URLs. The hooks run inside the transaction that turns the
automation on (activate), off (deactivate) or deletes it (delete), so what
they write commits or rolls back with it. activate may raise TriggerRefused:
the automation then stays off and the message reaches whoever turned it on
(admin, the import command). Adding a trigger type is adding a module here:
the schema and the services find it. A module may also have
errors(settings) -> [(path, message)], checks its schema cannot state.
"""

import importlib
import pkgutil
from functools import cache
from types import ModuleType


class TriggerRefused(Exception):
    """The trigger cannot be activated (say, another app refused to register a webhook); the message says why."""


@cache
def types() -> dict[str, ModuleType]:
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found[module.TYPE] = module
    return found


def of(automation) -> ModuleType:
    return types()[automation.definition.get("trigger", {}).get("type", "webhook")]
