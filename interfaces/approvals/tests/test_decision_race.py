"""Decisions racing on one item, on real threads and PostgreSQL: one is recorded, every other sees it."""

import functools
import threading

import pytest
from django.db import connection, connections

from automations import runs
from automations.models import Run
from interfaces.approvals import queues
from interfaces.models import ApprovalItem
from interfaces.tests.support import ASK_THEN_RECORD, deliver

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks between threads need PostgreSQL"),
]

RACERS = 8


def race(*calls):
    """Run the calls at once, each on its own thread and connection; returns their results in order."""
    barrier, results = threading.Barrier(len(calls)), [None] * len(calls)

    def go(index, call):
        try:
            barrier.wait()
            results[index] = call()
        finally:
            connections.close_all()

    threads = [threading.Thread(target=go, args=(index, call)) for index, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_of_decisions_racing_on_one_item_one_is_recorded_and_the_others_see_it(make_automation):
    run = deliver(make_automation(ASK_THEN_RECORD))
    item = ApprovalItem.objects.get()
    queue = item.queue

    def decision(n):
        verdict = "approved" if n % 2 else "rejected"
        return lambda: queues.decide(queue=queue, item_id=item.pk, decision=verdict, comment=str(n), address=None)

    outcomes = race(*(decision(n) for n in range(RACERS)))
    assert outcomes.count(queues.Outcome.DECIDED) == 1
    assert outcomes.count(queues.Outcome.ALREADY_DECIDED) == RACERS - 1
    item.refresh_from_db()
    run.refresh_from_db()
    assert run.answer == {"decision": item.decision, "comment": item.comment, "decided_at": item.decided_at.isoformat()}


def test_a_decision_racing_a_reset_either_is_recorded_or_finds_the_run_ended(make_automation):
    from automations import services

    for _ in range(5):
        automation = make_automation(ASK_THEN_RECORD, enabled=False)
        run = deliver_off(automation)
        item = ApprovalItem.objects.get(run=run)
        outcome, _ = race(
            functools.partial(
                queues.decide, queue=item.queue, item_id=item.pk, decision="approved", comment="", address=None
            ),
            functools.partial(services.reset, automation=automation),
        )
        item.refresh_from_db()
        run.refresh_from_db()
        if outcome is queues.Outcome.DECIDED:  # the answer came first: the reset ended the run anyway
            assert item.decision == "approved"
        else:
            assert outcome is queues.Outcome.CLOSED and item.decision == ""
        assert run.status == Run.Status.FAILED and "reset" in run.error


def deliver_off(automation):
    """A waiting run of an automation that is off (Reset needs it off): started as a delivery's run would be."""
    from automations import engine

    run = runs.start(automation=automation, trigger={"body": {"order": 1}}, source="webhook")
    engine.advance(run)
    runs.settle(run, None)
    return run
