"""Celery is configured for durability (late acks, redelivery after the visibility timeout) and beat runs its jobs."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis
from celery.signals import task_postrun, task_prerun
from django.db import connection

from config.celery import app

ROOT = Path(__file__).resolve().parent.parent


def test_tasks_are_acknowledged_late_and_requeued_when_a_worker_dies():
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1


SCHEDULED = {
    "catalog.rebuild_feed",
    "catalog.build_bulk",
    "catalog.expire_retired_apps",
    "automations.sweep_runs",
    "mcp_auth.purge_unused_clients",
    "mcp_auth.clear_expired",
    "connections.clean_registrations",
}


def test_the_tasks_are_registered():
    app.loader.import_default_modules()
    assert SCHEDULED | {"hooks.process_delivery", "hooks.replay_kept"} <= set(app.tasks)


def test_beat_schedules_every_catalog_job_and_the_one_sweeper():
    tasks = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert tasks == SCHEDULED


def test_beat_runs_the_sweeper_as_often_as_the_environment_says(tmp_path):
    probe = (
        "import django; django.setup(); from config.celery import app; from config.beat import Scheduler; "
        f"scheduler = Scheduler(app=app, schedule_filename={str(tmp_path / 'schedule')!r}); "
        "print(scheduler.schedule['automations-sweep-runs'].schedule.run_every.total_seconds()); scheduler.close()"
    )
    environment = {**os.environ, "RUN_SWEEP_SECONDS": "7"}
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "7.0"


@pytest.fixture
def redis_queue(settings):
    """A queue of its own on the test Redis, through the broker connection a worker would open."""
    if not settings.REDIS_URL:
        pytest.skip("the embedded default's file broker has no visibility timeout")
    name = f"test-visibility-{uuid.uuid4().hex}"
    with app.connection_for_write() as broker:
        queue = broker.SimpleQueue(name)
        try:
            yield queue
        finally:
            queue.close()  # gives back a message still taken, as a worker shutting down would
    with redis.Redis.from_url(settings.REDIS_URL) as client:
        client.delete(name, f"_kombu.binding.{name}", f"_kombu.binding_permanent.{name}")


def taken_seconds_ago(queue, message, seconds: float) -> None:
    """Backdate when the message was taken, as kombu records it, instead of waiting that long."""
    channel = queue.channel
    with channel.conn_or_acquire() as client:
        client.zadd(channel.unacked_index_key, {message.delivery_tag: time.time() - seconds})


def waiting(queue) -> int:
    with queue.channel.conn_or_acquire() as client:
        return client.llen(queue.queue.name)


def test_redis_redelivers_a_message_taken_but_not_acknowledged_only_after_the_visibility_timeout(redis_queue):
    assert redis_queue.channel.visibility_timeout == 3600
    redis_queue.put({"delivery": 1})
    taken = redis_queue.get(timeout=5)  # a worker took it, then died without acknowledging it

    taken_seconds_ago(redis_queue, taken, 3590)
    redis_queue.channel.qos.restore_visible(interval=1)
    assert waiting(redis_queue) == 0

    taken_seconds_ago(redis_queue, taken, 3610)
    redis_queue.channel.qos.restore_visible(interval=1)
    assert waiting(redis_queue) == 1
    again = redis_queue.get(timeout=5)
    assert again.payload == {"delivery": 1}
    again.ack()


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
