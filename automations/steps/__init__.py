"""Step kinds: one module per kind, each exposing KIND, SCHEMA and run(settings, context).

SCHEMA is the JSON schema of the step's own settings (every field but `id`
and `kind`); run() receives those settings with their {{ paths }} already
filled (automations/paths.py) and returns the step's output, which later
steps read as `steps.<id>`. A step raises StepFailed to fail the run, or
StopRun to end it early without failing. Adding a kind is adding a module
here: the schema and the engine find it.

A step that waits (for a time, or for a person) raises Wait; the run is
then `waiting` and holds nothing. When it is resumed, the engine calls the
module's resume(waiting_for, answer) instead of run(), and its return value
is the step's output.

A module with SENDS_OUT = True sends what its settings render out of the
service (an HTTP request, a web service's answer) and stores it nowhere but
its output: `{{trigger.path}}` renders for it with the URL's key in it, and
the engine stores its output and error with the key replaced by {key}
(automations/requested_path.py). Every other kind renders the stored path.

A module may also have errors(settings) -> [(path, message)]: checks its
schema cannot state (a form's field names unique), run once the schema
passed; each path is inside the step.
"""

import importlib
import pkgutil
import time
from dataclasses import dataclass
from functools import cache
from types import ModuleType


class StepFailed(Exception):
    """The step could not do its work; the run fails (and may be retried). Output, if any, is still recorded."""

    def __init__(self, message: str, output=None):
        super().__init__(message)
        self.output = output


WAIT_TIMED_OUT = "the web service caller's wait timed out"
PAST_TIME_LIMIT = "the run passed its time limit"


class StopRun(Exception):
    """The run ends here, successfully: a condition was false."""


class Wait(Exception):
    """The run waits here, holding no worker, lease or lock, until beat resumes it (at `until`) or an answer does.

    waiting_for says what for, as Execution History shows it: JSON, with at
    least "kind" (the step kind); the engine adds the step's id.
    """

    def __init__(self, waiting_for: dict, until=None):
        super().__init__(waiting_for.get("kind", "wait"))
        self.waiting_for = waiting_for
        self.until = until  # an aware datetime, or None: only an answer resumes the run


@dataclass
class StepContext:
    automation: "object"  # automations.models.Automation
    data: dict  # {"trigger": ..., "steps": {step id: output}}
    response: dict | None = None  # set by a respond step, returned to a web service caller
    deadline: float | None = None  # time.monotonic() by which the run must have ended
    past_deadline: str = WAIT_TIMED_OUT  # the step's error once the deadline has passed
    run: "object | None" = None  # the Run being advanced: a step that asks a person ties its link to it
    position: int | None = None  # the running step's index in the run's definition (automations/effects.py)
    step_id: str | None = None  # and its id

    def seconds_left(self, wanted: float) -> float:
        """wanted, or less when the run's deadline is nearer; StepFailed once it has passed."""
        if self.deadline is None:
            return wanted
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise StepFailed(self.past_deadline)
        return min(wanted, left)


@cache
def kinds() -> dict[str, ModuleType]:
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found[module.KIND] = module
    return found
