"""The database out of reach (edge/outages.py): 503 with Retry-After, one log line per outage, nothing half-stored.

The error is raised where the database would raise it; the outage of a real
PostgreSQL under load is measured by the fault benchmarks.
"""

import logging
from urllib.parse import urlsplit

import pytest
from django.db import DataError, OperationalError

from automations import services as automation_services
from edge.outages import outage
from hooks import intake
from hooks.models import Delivery

# Rows are stored as in production: by the hooks process's writer thread, on a connection of its own.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _no_outage_left(caplog):
    """And django.request's records in caplog: that logger does not propagate to the root."""
    logging.getLogger("django.request").addHandler(caplog.handler)
    yield
    logging.getLogger("django.request").removeHandler(caplog.handler)
    outage.since, outage.refused = None, 0


def hook_path(automation) -> str:
    return urlsplit(automation_services.hook_url(automation)).path


def test_webhooks_sent_while_the_database_is_out_of_reach_get_503_and_one_log_line(
    hooks_client, make_automation, monkeypatch, caplog
):
    path = hook_path(make_automation())
    hooks_client.post(path, data=b"{}", content_type="application/json")  # its key now remembered: no lookup
    store = intake.writer.store

    async def refused(row):
        raise OperationalError('connection failed: connection to server at "127.0.0.1", port 5432 failed')

    monkeypatch.setattr(intake.writer, "store", refused)
    caplog.set_level(logging.INFO)
    answers = [hooks_client.post(path, data=b'{"n": 1}', content_type="application/json") for _ in range(3)]
    assert [(a.status_code, a["Retry-After"], a.content) for a in answers] == [(503, "5", b"")] * 3
    said = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert [record.getMessage()[:34] for record in said] == ["the database cannot be reached (Op"]
    assert not any(record.exc_info or record.exc_text for record in caplog.records)  # no traceback per request

    monkeypatch.setattr(intake.writer, "store", store)
    assert hooks_client.post(path, data=b'{"n": 2}', content_type="application/json").status_code == 200
    back = [record.getMessage() for record in caplog.records if "answers again after" in record.getMessage()]
    assert len(back) == 1 and "3 requests got 503" in back[0]
    assert Delivery.objects.count() == 2  # the one before and the one after: none of the refused


def test_an_error_that_retrying_cannot_mend_stays_a_500_with_its_traceback(
    hooks_client, make_automation, monkeypatch, caplog
):
    path = hook_path(make_automation())
    hooks_client.post(path, data=b"{}", content_type="application/json")

    async def refused(row):
        raise DataError("invalid byte sequence for encoding")

    monkeypatch.setattr(intake.writer, "store", refused)
    assert hooks_client.post(path, data=b"{}", content_type="application/json").status_code == 500
    logged = [record for record in caplog.records if "Internal Server Error" in record.getMessage()]
    assert len(logged) == 1 and "DataError" in logged[0].exc_text  # the traceback, as the log redacts it
    assert outage.since is None


def test_a_page_whose_view_finds_the_database_out_of_reach_gets_503_and_the_next_one_ends_the_outage(
    web_client, owner, monkeypatch, caplog
):
    from interfaces.forms import selectors
    from interfaces.tests.support import FIELDS, form_path

    definition = {"trigger": {"type": "form", "fields": FIELDS}, "steps": []}
    path = form_path(automation_services.create_automation(owner=owner, name="F", definition=definition, enabled=True))
    found = selectors.form_automation

    def refused(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    caplog.set_level(logging.INFO)
    monkeypatch.setattr(selectors, "form_automation", refused)
    for _ in range(2):
        response = web_client.get(path)
        assert (response.status_code, response["Retry-After"]) == (503, "5")
        assert "no-store" in response["Cache-Control"]
    assert not any(record.exc_info or record.exc_text for record in caplog.records)
    monkeypatch.setattr(selectors, "form_automation", found)
    assert web_client.get(path).status_code == 200
    said = [record.getMessage() for record in caplog.records if record.name == "flowgate.outages"]
    assert len(said) == 2 and "cannot be reached" in said[0] and "2 requests got 503" in said[1]


def run_as_a_worker_does(task, *args):
    """The task called as a Celery worker calls it: with a request of a worker's, neither direct nor eager."""
    task.push_request(called_directly=False, is_eager=False)
    try:
        return task(*args)
    finally:
        task.pop_request()


def test_worker_tasks_that_meet_the_outage_log_one_line_for_it_not_a_traceback_each(monkeypatch, caplog):
    from config.celery import OutageAwareTask
    from edge.outages import task_outage
    from hooks import deliveries, tasks

    def refused(**kwargs):
        raise OperationalError('connection to server at "127.0.0.1", port 5432 failed: Connection refused')

    caplog.set_level(logging.INFO)
    monkeypatch.setattr(deliveries, "process_deliveries", refused)
    assert isinstance(tasks.process_deliveries, OutageAwareTask)
    try:
        for ids in ([1, 2], [3], [4]):
            assert run_as_a_worker_does(tasks.process_deliveries, ids) is None  # left for the sweeper
        assert not any(record.exc_info or record.exc_text for record in caplog.records)
        monkeypatch.setattr(deliveries, "process_deliveries", lambda **kwargs: None)
        run_as_a_worker_does(tasks.process_deliveries, [5])
        said = [record.getMessage() for record in caplog.records if record.name == "flowgate.outages"]
        assert len(said) == 2
        assert "cannot be reached (OperationalError" in said[0] and "left for the sweeper" in said[0]
        assert "3 tasks met the outage" in said[1]
    finally:
        task_outage.since, task_outage.refused = None, 0


def test_a_worker_task_whose_error_is_no_outage_still_fails_with_its_traceback(monkeypatch):
    from hooks import deliveries, tasks

    def refused(**kwargs):
        raise DataError("invalid byte sequence for encoding")

    monkeypatch.setattr(deliveries, "process_deliveries", refused)
    with pytest.raises(DataError):
        run_as_a_worker_does(tasks.process_deliveries, [1])


def test_a_task_called_directly_raises_the_outage_to_its_caller(monkeypatch):
    from hooks import deliveries, tasks

    def refused(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(deliveries, "process_deliveries", refused)
    with pytest.raises(OperationalError):
        tasks.process_deliveries([1])
    with pytest.raises(OperationalError):
        tasks.process_deliveries.apply(([1],), throw=True)


def test_runs_that_meet_the_outage_keep_their_lease_with_one_line_for_it(make_automation, monkeypatch, caplog):
    """A worker's runs whose steps found the database gone are neither failed nor logged each with a traceback:
    they keep their lease, as runs of a lost worker do, and the sweeper gives them back."""
    from automations import engine
    from automations.models import Run
    from edge.outages import task_outage
    from hooks import deliveries, services
    from hooks.incoming import Incoming

    automation = make_automation([{"id": "v", "kind": "set_values", "values": {"n": "{{trigger.body.n}}"}}])
    incoming = Incoming("POST", "/automation-k", "", "application/json", b'{"n": 1}')
    ids = [services.accept_delivery(automation_id=automation.pk, incoming=incoming).pk for _ in range(3)]

    def gone(*args, **kwargs):
        raise OperationalError("terminating connection due to administrator command")

    caplog.set_level(logging.INFO)
    monkeypatch.setattr(engine, "advance", gone)
    try:
        deliveries.process_deliveries(delivery_ids=ids)
        said = [record for record in caplog.records if record.levelno >= logging.WARNING]
        assert [record.getMessage()[:30] for record in said] == ["the database cannot be reached"]
        assert not any(record.exc_info or record.exc_text for record in caplog.records)
        held = Run.objects.filter(automation=automation)
        # Not failed for the outage: still running under the worker's claim, until the lease lapses.
        assert held.count() == 3 and all(run.status == Run.Status.RUNNING and run.claim for run in held)
    finally:
        task_outage.since, task_outage.refused = None, 0
