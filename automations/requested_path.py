"""trigger.path as requested (SPEC 2.3): the stored path's {key} filled again, for the steps that send it out.

A URL key is a password (DESIGN.md contract 7): the run stores its trigger's
path as `/automation-{key}`, and Execution History, admin, logs, MCP
results and exports show it so. A step whose kind sends its settings out of
the service and stores them nowhere else (an HTTP request, a web service's
answer: the module's SENDS_OUT) renders `{{trigger.path}}` with the key in
it, rebuilt when it renders from the sealed copy of the key the run's URL
carried (Run.trigger_key). The engine then stores that step's output and
error with the key replaced by {key} again (without_key). Every other step
kind renders the stored path.

The key is known for a run of a webhook or web service URL whose key is
certain (publickeys.selectors.key_id_live_at) and still live when the step
renders: once "Issue new URLs" retired it, its sealed copy is gone and the
path keeps {key} (docs/public-keys.md).
"""

from automations import paths
from publickeys import selectors as key_selectors
from publickeys.redaction import PLACEHOLDER

# The paths of the trigger data that hold its path: the whole trigger, or the path itself.
_PATH_REFERENCES = {"trigger", "trigger.path"}


def wanted(definition: dict) -> bool:
    """True when a step that sends its settings out refers to the trigger's path: only then is the key looked up."""
    from automations.steps import kinds

    for step in definition.get("steps", []):
        module = kinds().get(step.get("kind"))
        if getattr(module, "SENDS_OUT", False) and paths.references(step) & _PATH_REFERENCES:
            return True
    return False


class RequestedPath:
    """The render data of one run for the steps that send trigger.path out; the key unsealed at most once."""

    def __init__(self, run):
        self.run = run
        self._key: str | None = None
        self._looked_up = False

    def key(self) -> str | None:
        if not self._looked_up:
            self._looked_up = True
            self._key = key_selectors.key_of_id(self.run.trigger_key_id)
        return self._key

    def data(self, data: dict) -> dict:
        """data (the run's context) with trigger.path as requested, when the key is known; data itself otherwise."""
        trigger = data.get("trigger")
        path = trigger.get("path") if isinstance(trigger, dict) else None
        if not isinstance(path, str) or PLACEHOLDER not in path or self.key() is None:
            return data
        return {**data, "trigger": {**trigger, "path": path.replace(PLACEHOLDER, self.key())}}

    def without_key(self, value):
        """value with the key, wherever it appears in its strings and names, replaced by {key}."""
        if not self._looked_up or self._key is None:
            return value
        return _replaced(value, self._key)


def _replaced(value, key: str):
    if isinstance(value, str):
        return value.replace(key, PLACEHOLDER)
    if isinstance(value, dict):
        return {_replaced(name, key): _replaced(item, key) for name, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, key) for item in value]
    return value
