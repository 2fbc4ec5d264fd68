"""The database out of reach: 503 with Retry-After, and one log line when it goes and one when it comes back.

A webhook sender, a form's visitor or a client of a web service asked
while PostgreSQL restarts or refuses connections gets 503 and Retry-After,
never a 200 for a delivery not stored, and never a 500 with a traceback per
request: an outage of 11 s under 200 webhooks a second would write 2,000 of
them. Errors that retrying cannot mend (a constraint, a bad value, a query
the database refuses) are not an outage: they stay 500s with their traceback.
"""

import logging
import threading
import time

from django.db import DatabaseError, DataError, IntegrityError, NotSupportedError, ProgrammingError

logger = logging.getLogger("flowgate.outages")
RETRY_AFTER_SECONDS = 5
# Not an outage: the same request would fail the same way again.
_NOT_AN_OUTAGE = (IntegrityError, DataError, ProgrammingError, NotSupportedError)


class DatabaseOutage:
    """The outage this process sees, if any: shared by its threads (the web process) or its loop (the hooks one)."""

    def __init__(self, refused: str = "requests that need it get 503 with Retry-After", unit: str = "requests got 503"):
        self._lock = threading.Lock()
        self.since: float | None = None
        self.refused = 0
        self._what_happens, self._counted = refused, unit

    @staticmethod
    def is_outage(error: BaseException) -> bool:
        return isinstance(error, DatabaseError) and not isinstance(error, _NOT_AN_OUTAGE)

    def refused_one(self, error: BaseException) -> None:
        """A request answered 503: the first of an outage is logged, with what the database said."""
        with self._lock:
            first, self.refused = self.since is None, self.refused + 1
            if first:
                self.since = time.monotonic()
        if first:
            logger.error(
                "the database cannot be reached (%s: %s): %s until it answers again",
                type(error).__name__,
                str(error).strip().splitlines()[0][:200] if str(error).strip() else "no message",
                self._what_happens,
            )

    def answered(self) -> None:
        """A request the database served: an outage under way has ended. Cheap while there is none."""
        if self.since is None:
            return
        with self._lock:
            if self.since is None:
                return
            lasted, refused = time.monotonic() - self.since, self.refused
            self.since, self.refused = None, 0
        logger.warning("the database answers again after %.1f s; %d %s meanwhile", lasted, refused, self._counted)


outage = DatabaseOutage()
# A Celery worker's tasks (config/celery.py): one that meets the outage leaves its delivery pending or its run
# leased, and the sweeper queues it again; a traceback for each would be hundreds for one restart.
task_outage = DatabaseOutage("tasks that need it are left for the sweeper", "tasks met the outage")
