"""The engine (DESIGN.md contract 5): advance(run) executes steps until the run ends or waits.

It follows the definition the run started with, and records each step's id,
kind, status, output and error on the run, but does not save the run: the
caller saves the outcome through automations.runs.settle, which does so only
while its worker still holds the run, so that a run ends exactly once.
"""

import logging

from django.db import DatabaseError
from django.utils import timezone

from automations import jsonsafe, paths
from automations.models import Run
from automations.requested_path import RequestedPath
from automations.steps import WAIT_TIMED_OUT, StepContext, StepFailed, StopRun, Wait, kinds

logger = logging.getLogger(__name__)

# What advance() sets on a run. Callers save these alone: the trigger, often the
# run's largest value, was stored when the run started and is not written again.
OUTCOME_FIELDS = ("status", "error", "steps", "finished_at", "waiting_for", "resume_at", "answer")


def advance(
    run: Run, *, answer=None, deadline: float | None = None, past_deadline: str = WAIT_TIMED_OUT
) -> dict | None:
    """Run the steps not yet done; set the run's status, steps and error. Returns a respond step's response.

    A run that waited goes on at the step that waited: its module's resume()
    gets what the step waited for and the answer (None when time resumed it).
    deadline (time.monotonic()) bounds the run: no step starts after it, and
    a step that waits (an HTTP request) waits no longer than the time left.
    The step that finds it passed fails with past_deadline.
    """
    automation = run.automation
    done = [record for record in run.steps if record.get("status") == "succeeded"]
    waited = run.steps[len(done)] if len(run.steps) > len(done) else None
    if waited is not None and waited.get("status") != "waiting":
        waited = None
    context = StepContext(
        automation,
        {"trigger": run.trigger, "steps": {r["id"]: r.get("output") for r in done}},
        deadline=deadline,
        past_deadline=past_deadline,
        run=run,
    )
    records = list(done)
    requested = RequestedPath(run)
    run.status, run.error, run.waiting_for, run.resume_at, run.answer = Run.Status.SUCCEEDED, "", None, None, None
    # Runs started before runs kept their definition (migration 0003) go on with the automation's.
    definition = run.definition or automation.definition
    for position, step in enumerate(definition.get("steps", [])[len(done) :], start=len(done)):
        context.position, context.step_id = position, step["id"]
        record = {"id": step["id"], "kind": step["kind"]}
        records.append(record)
        settings = {name: value for name, value in step.items() if name not in ("id", "kind")}
        module = kinds()[step["kind"]]
        try:
            context.seconds_left(1)  # past the deadline, no further step starts
            if waited is not None:
                record["waited_for"] = waited["waiting_for"]
                output, waited = module.resume(waited["waiting_for"], answer), None
            else:
                data = requested.data(context.data) if getattr(module, "SENDS_OUT", False) else context.data
                output = module.run(paths.render(settings, data), context)
            output = _storable(requested.without_key(output))
        except Wait as wait:
            waiting_for = {**_storable(wait.waiting_for), "step": step["id"]}
            record.update(status="waiting", waiting_for=waiting_for)
            run.status, run.waiting_for, run.resume_at = Run.Status.WAITING, waiting_for, wait.until
            break
        except StopRun as stop:
            record.update(status="stopped", note=jsonsafe.clean_text(str(stop)))
            run.status = Run.Status.STOPPED
            break
        except StepFailed as failure:
            error = jsonsafe.clean_text(requested.without_key(str(failure)))
            record.update(status="failed", error=error, output=_storable_or_none(requested.without_key(failure.output)))
            run.status, run.error = Run.Status.FAILED, f"step {step['id']}: {error}"
            break
        except Exception as error:  # a fault in a step fails the run, which is retried as its automation says
            if not _deleted_meanwhile(error, automation):  # its rows refused: the run goes with it, nothing to report
                logger.exception("step %s (%s) of automation %s raised", step["id"], step["kind"], automation.pk)
            record.update(status="failed", error="internal error")
            run.status, run.error = Run.Status.FAILED, f"step {step['id']}: internal error"
            break
        record.update(status="succeeded", output=output)
        context.data["steps"][step["id"]] = output
    run.steps = records
    run.finished_at = None if run.status == Run.Status.WAITING else timezone.now()
    return _storable_or_none(context.response)


def _deleted_meanwhile(error: Exception, automation) -> bool:
    return isinstance(error, DatabaseError) and not type(automation).objects.filter(pk=automation.pk).exists()


def _storable(output):
    """A step's output as the run can store it (automations/jsonsafe.py): what other apps answered is anyone's bytes."""
    try:
        return jsonsafe.clean(output)
    except ValueError as error:
        raise StepFailed(f"its output could not be stored: {error}") from None


def _storable_or_none(value):
    try:
        return jsonsafe.clean(value)
    except ValueError:
        return None
