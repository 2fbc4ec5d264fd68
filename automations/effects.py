"""What a step did outside its run, kept per (run, step position), so that the step never does it twice.

A step that asks a person acts before its run is saved as waiting: it
issues a one-time link and mails it, or places an approval item. A worker
lost in between (killed, its lease run out) gives the run back to the step
it last waited at, and the next worker runs the step again (runs.sweep). A
step asks once() for its effect: the second execution gets what the first
recorded, and waits on the same link or item, without a second mail or a
second item.
"""

from collections.abc import Callable

from django.db import IntegrityError, transaction

from automations.models import StepEffect
from automations.steps import StepContext


def once(context: StepContext, make: Callable[[], dict]) -> dict:
    """What make() returned the first time this step of this run ran; make() runs only then.

    make() runs in the transaction that records what it returned: its rows
    (a key, an item) commit together with the record or not at all. Of two
    executions racing (a worker presumed lost that was only slow), the
    second's insert fails on the unique (run, position) and everything it
    made is rolled back; it gets the first's record. A step run outside a
    run (no run, no position) just acts.
    """
    run, position = context.run, context.position
    if run is None or position is None:
        return make()
    found = recorded(context)
    if found is not None:
        return found
    try:
        with transaction.atomic():
            data = make()
            StepEffect.objects.create(run_id=run.pk, position=position, step=context.step_id or "", data=data)
            return data
    except IntegrityError:
        found = recorded(context)
        if found is None:  # the failure was of make()'s own rows, not another execution's record
            raise
        return found


def recorded(context: StepContext) -> dict | None:
    return (
        StepEffect.objects.filter(run_id=context.run.pk, position=context.position)
        .values_list("data", flat=True)
        .first()
    )


def note(context: StepContext, data: dict) -> None:
    """Replace what this step of this run recorded (a link mailed since it was issued)."""
    if context.run is None or context.position is None:
        return
    StepEffect.objects.filter(run_id=context.run.pk, position=context.position).update(data=data)
