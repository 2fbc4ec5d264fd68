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


class Outage:
    """A service this process needs, out of reach as the process sees it: one log line when it goes and one when
    it comes back, shared by the process's threads (the web process) or its loop (the hooks one).

    service names it ("the database"), meanwhile says what happens until it answers, counted what the second
    line counts ("requests got 503").
    """

    def __init__(self, service: str, meanwhile: str, counted: str, *, log=logger, level: int = logging.ERROR):
        self._lock = threading.Lock()
        self.since: float | None = None
        self.refused = 0
        self._service, self._meanwhile, self._counted, self._log, self._level = service, meanwhile, counted, log, level

    def went(self, error: BaseException, count: int = 1) -> None:
        """count items met the outage: the first of an outage is logged, with what the service said."""
        with self._lock:
            first, self.refused = self.since is None, self.refused + count
            if first:
                self.since = time.monotonic()
        if first:
            self._log.log(
                self._level,
                "%s cannot be reached (%s: %s): %s until it answers again",
                self._service,
                type(error).__name__,
                str(error).strip().splitlines()[0][:200] if str(error).strip() else "no message",
                self._meanwhile,
            )

    def answered(self) -> None:
        """The service served this process: an outage under way has ended. Cheap while there is none."""
        if self.since is None:
            return
        with self._lock:
            if self.since is None:
                return
            lasted, refused = time.monotonic() - self.since, self.refused
            self.since, self.refused = None, 0
        back = "%s answers again after %.1f s; %d %s meanwhile"
        self._log.warning(back, self._service, lasted, refused, self._counted)


class DatabaseOutage(Outage):
    def __init__(self, meanwhile: str = "requests that need it get 503 with Retry-After", counted="requests got 503"):
        super().__init__("the database", meanwhile, counted)

    @staticmethod
    def is_outage(error: BaseException) -> bool:
        return isinstance(error, DatabaseError) and not isinstance(error, _NOT_AN_OUTAGE)

    def refused_one(self, error: BaseException) -> None:
        """A request answered 503, or a task left for the sweeper."""
        self.went(error)


outage = DatabaseOutage()
# A Celery worker's tasks (config/celery.py): one that meets the outage leaves its delivery pending or its run
# leased, and the sweeper queues it again; a traceback for each would be hundreds for one restart.
task_outage = DatabaseOutage("tasks that need it are left for the sweeper", "tasks met the outage")
