"""Beat's scheduler: Celery's file-backed one, which makes the folder of its schedule file first.

The schedule file lives in FLOWGATE_VAR_DIR, which only the embedded default
creates at start-up; with DATABASE_URL and REDIS_URL set, stock beat exited
with FileNotFoundError on a fresh deploy, and without beat nothing sweeps
lost deliveries or builds the bulk feed.
"""

from pathlib import Path

from celery.beat import PersistentScheduler
from celery.utils.log import get_logger

logger = get_logger(__name__)


class Scheduler(PersistentScheduler):
    """A PersistentScheduler that creates the folder of its schedule file, whichever file it is given."""

    def _open_schedule(self):
        Path(self.schedule_filename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open_schedule()

    def setup_schedule(self):
        """Celery's, then a line saying beat is ready: which file holds the schedule, and how many entries it has."""
        super().setup_schedule()
        logger.info("beat: schedule ready in %s (%d entries)", self.schedule_filename, len(self.schedule))
