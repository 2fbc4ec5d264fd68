"""Turning a delivery into its run is race-free on PostgreSQL: of many workers taking it at once, one makes its run."""

import pytest
from django.db import connection

from automations.models import Run
from hooks import deliveries, services
from hooks.incoming import Incoming
from hooks.models import Delivery
from tests.races import at_once


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("attempt", range(3))
def test_of_workers_taking_one_delivery_together_exactly_one_makes_its_run(make_automation, attempt):
    if connection.vendor != "postgresql":
        pytest.skip("row-level concurrency is PostgreSQL's (SQLite serializes every writer)")
    automation = make_automation([])
    delivery = services.accept_delivery(automation_id=automation.pk, incoming=Incoming("POST", "/", "", "", b"x"))

    made = at_once(*[lambda: deliveries.start_runs(delivery_id=delivery.pk)] * 8)

    assert sorted(len(made_runs) for made_runs in made) == [0] * 7 + [1]
    assert Run.objects.count() == 1
    assert Delivery.objects.get().run_id == Run.objects.get().pk


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("attempt", range(3))
def test_of_workers_going_on_with_one_delivery_together_its_run_completes_once(make_automation, attempt):
    if connection.vendor != "postgresql":
        pytest.skip("row-level concurrency is PostgreSQL's (SQLite serializes every writer)")
    automation = make_automation(
        [{"id": "row", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"n": 1}}]
    )
    delivery = services.accept_delivery(automation_id=automation.pk, incoming=Incoming("POST", "/", "", "", b"x"))

    at_once(*[lambda: deliveries.process_delivery(delivery_id=delivery.pk)] * 4)

    assert list(Run.objects.values_list("status", flat=True)) == ["succeeded"]
    assert automation.lookup_rows.count() == 1
