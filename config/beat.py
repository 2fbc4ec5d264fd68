"""Beat's scheduler: Celery's file-backed one, which makes the folder of its schedule file first.

The schedule file lives in FLOWGATE_VAR_DIR, which only the embedded default
creates at start-up; with DATABASE_URL and REDIS_URL set, stock beat exited
with FileNotFoundError on a fresh deploy, and without beat nothing sweeps
lost deliveries or builds the bulk feed. The folder is made by
overrides/celery_beat_schedule.py.
"""

from celery.utils.log import get_logger

from overrides.celery_beat_schedule import FolderMakingScheduler

logger = get_logger(__name__)


class Scheduler(FolderMakingScheduler):
    """Celery's file-backed scheduler, its folder made first, saying in the log when its schedule is ready."""

    def setup_schedule(self):
        """Celery's, then a line saying beat is ready: which file holds the schedule, and how many entries it has."""
        super().setup_schedule()
        logger.info("beat: schedule ready in %s (%d entries)", self.schedule_filename, len(self.schedule))
