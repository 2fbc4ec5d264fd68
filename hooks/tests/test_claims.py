"""Claiming a delivery is race-free on PostgreSQL: of many workers taking it at once, one gets it."""

import threading
import uuid

import pytest
from django.db import connection, connections

from hooks import services
from hooks.incoming import Incoming


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("attempt", range(3))
def test_of_workers_claiming_one_delivery_together_exactly_one_gets_it(make_automation, attempt):
    if connection.vendor != "postgresql":
        pytest.skip("row-level concurrency is PostgreSQL's (SQLite serializes every writer)")
    automation = make_automation([])
    delivery = services.accept_delivery(automation_id=automation.pk, incoming=Incoming("POST", "/", "", "", b"x"))
    start, claimed = threading.Barrier(8), []

    def claim():
        start.wait()
        try:
            claimed.append(services._claim(delivery.pk, uuid.uuid4()))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len([row for row in claimed if row is not None]) == 1
