"""Celery's file-backed beat scheduler, which makes the folder of its schedule file before opening it.

PersistentScheduler opens its shelve file in `_open_schedule`, private, and
has no setting that creates the folder; the schedule file lives in
FLOWGATE_VAR_DIR, which only the embedded default creates at start-up
(config/beat.py says what beat runs).
"""

from pathlib import Path

from celery.beat import PersistentScheduler

WRITTEN_FOR = {"celery": "5.7.0"}


class FolderMakingScheduler(PersistentScheduler):
    """A PersistentScheduler that creates the folder of its schedule file, whichever file it is given."""

    def _open_schedule(self):
        Path(self.schedule_filename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open_schedule()
