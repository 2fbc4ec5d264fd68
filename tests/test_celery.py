"""Celery is configured for durability, and beat's schedule holds the catalog jobs and the delivery sweeper."""
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
