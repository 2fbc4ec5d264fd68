"""runs.settle with a gate: the caller's row and the run's outcome, as the ORM would write them, in one go."""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from automations import runs
from automations.models import Run
from hooks.models import Delivery

pytestmark = pytest.mark.django_db

OUTCOME = {
    "status": Run.Status.WAITING,
    "steps": [{"id": "pause", "kind": "delay", "status": "waiting", "waiting_for": {"kind": "delay"}}],
    "waiting_for": {"kind": "delay", "step": "pause", "note": "\u00e9 \"quoted\" 'single'"},
}


def held_run(automation, claim: uuid.UUID) -> Run:
    run = runs.start(automation=automation, trigger={"body": {"n": 1}}, source=Run.Source.WEBHOOK, claim=claim)
    for name, value in OUTCOME.items():
        setattr(run, name, value)
    run.resume_at = timezone.now() + timedelta(days=1)  # past the next sweep: no task is queued for it
    return run


def held_delivery(automation, claim: uuid.UUID) -> Delivery:
    return Delivery.objects.create(
        automation=automation, method="POST", path="/", body=b"{}", body_digest="0" * 64, status="running", claim=claim
    )


def gate(delivery: Delivery, claim: uuid.UUID) -> runs.Gate:
    changes = {"claim": None, "lease_until": None, "status": Delivery.Status.DONE, "error": ""}
    return runs.Gate(Delivery, delivery.pk, {"claim": claim, "status": Delivery.Status.RUNNING}, changes)


def row(model, pk) -> dict:
    stored = model.objects.get(pk=pk)
    return {field.attname: getattr(stored, field.attname) for field in model._meta.concrete_fields}


def test_a_run_settled_with_a_gate_reads_back_as_one_settled_alone(make_automation):
    automation, claim = make_automation([]), uuid.uuid4()
    alone, gated = held_run(automation, claim), held_run(automation, claim)
    gated.resume_at = alone.resume_at
    delivery = held_delivery(automation, claim)
    assert runs.settle(alone, claim) is True
    assert runs.settle(gated, claim, gate=gate(delivery, claim)) is True
    different = {name for name, value in row(Run, alone.pk).items() if row(Run, gated.pk)[name] != value}
    assert different == {"id", "started_at"}
    assert row(Run, gated.pk)["waiting_for"] == OUTCOME["waiting_for"]
    stored = Delivery.objects.get(pk=delivery.pk)
    assert (stored.status, stored.claim, stored.error) == (Delivery.Status.DONE, None, "")


def test_a_gate_that_no_longer_holds_settles_neither_row(make_automation):
    automation, claim = make_automation([]), uuid.uuid4()
    run, delivery = held_run(automation, claim), held_delivery(automation, uuid.uuid4())  # taken over
    before = row(Delivery, delivery.pk), row(Run, run.pk)
    assert runs.settle(run, claim, gate=gate(delivery, claim)) is False
    assert (row(Delivery, delivery.pk), row(Run, run.pk)) == before


def test_a_run_no_longer_held_is_not_settled_through_its_gate(make_automation):
    automation, claim = make_automation([]), uuid.uuid4()
    run, delivery = held_run(automation, uuid.uuid4()), held_delivery(automation, claim)
    before = row(Run, run.pk)
    assert runs.settle(run, claim, gate=gate(delivery, claim)) is False
    assert row(Run, run.pk) == before


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite settles in a transaction of two updates")
def test_the_gated_statement_is_built_once_per_shape_of_gate(make_automation):
    automation = make_automation([])

    def settle() -> bool:
        claim = uuid.uuid4()
        return runs.settle(held_run(automation, claim), claim, gate=gate(held_delivery(automation, claim), claim))

    assert settle() is True
    built = runs.gated_settle_sql.cache_info().misses
    assert settle() is True
    assert runs.gated_settle_sql.cache_info().misses == built
