"""Celery is configured for durability, and beat's schedule holds the catalog jobs and the delivery sweeper."""
import time

import pytest
from celery.signals import task_postrun, task_prerun
from django.db import connection

from config.celery import app


def test_tasks_are_acknowledged_late_and_requeued_when_a_worker_dies():
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1


SCHEDULED = {"catalog.rebuild_feed", "catalog.build_bulk", "catalog.expire_retired_apps", "hooks.sweep_deliveries"}


def test_the_tasks_are_registered():
    app.loader.import_default_modules()
    assert SCHEDULED | {"hooks.process_delivery", "hooks.replay_kept"} <= set(app.tasks)


def test_beat_schedules_every_catalog_job_and_the_sweeper():
    tasks = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert tasks == SCHEDULED


def test_the_sweeper_runs_as_often_as_configured(settings):
    assert app.conf.beat_schedule["hooks-sweep-deliveries"]["schedule"] == settings.DELIVERY_SWEEP_SECONDS


def test_redis_messages_are_redelivered_only_after_the_visibility_timeout(settings):
    if settings.REDIS_URL:
        assert app.conf.broker_transport_options["visibility_timeout"] >= 3600


@pytest.fixture
def worker_fixup():
    """Celery's own Django fixup, as a worker installs it: it closes connections around tasks unless told not to."""
    from celery.fixups.django import DjangoWorkerFixup

    fixup = DjangoWorkerFixup(app)
    task_prerun.connect(fixup.on_task_prerun)
    task_postrun.connect(fixup.on_task_postrun)
    yield
    task_prerun.disconnect(fixup.on_task_prerun)
    task_postrun.disconnect(fixup.on_task_postrun)


def run_task_signals(task):
    task_prerun.send(sender=task, task=task, task_id="t", args=(), kwargs={})
    connection.ensure_connection()
    task_postrun.send(sender=task, task=task, task_id="t", args=(), kwargs={}, retval=None, state="SUCCESS")


@pytest.mark.django_db(transaction=True)
def test_a_worker_keeps_its_database_connection_from_task_to_task(worker_fixup):
    connection.ensure_connection()
    first = connection.connection
    for _ in range(5):
        run_task_signals(app.tasks["hooks.process_delivery"])
    assert connection.connection is first


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the in-memory SQLite test database is never closed")
def test_a_worker_replaces_a_connection_past_its_max_age_before_the_next_task(worker_fixup):
    connection.ensure_connection()
    connection.close_at = time.monotonic() - 1  # DB_CONN_MAX_AGE has passed
    task = app.tasks["hooks.process_delivery"]
    task_prerun.send(sender=task, task=task, task_id="t", args=(), kwargs={})
    assert connection.connection is None
