"""Beat's scheduler makes the folder of its schedule file, so beat starts in every configuration."""

from pathlib import Path

from config.beat import Scheduler
from config.celery import app


def test_beat_uses_the_scheduler_that_makes_its_folder():
    assert app.conf.beat_scheduler == "config.beat:Scheduler"


def test_it_creates_the_missing_folder_of_its_schedule_file(tmp_path):
    schedule = tmp_path / "fresh" / "var" / "celerybeat-schedule"
    scheduler = Scheduler(app=app, schedule_filename=str(schedule))
    try:
        assert "automations-sweep-runs" in scheduler.schedule
    finally:
        scheduler.close()
    assert schedule.parent.is_dir()
    assert any(Path(schedule.parent).iterdir())
