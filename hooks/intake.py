"""Accepted deliveries committed and their runs queued: one row alone, or many in one group commit.

docs/webhooks.md, "What happens to a delivery" (DESIGN.md contract 1).
"""

import asyncio
import atexit
import logging
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field

from django.db import DatabaseError, IntegrityError, connection, connections, transaction

from automations.models import Automation
from config import process_cache
from hooks import statements, tasks

logger = logging.getLogger(__name__)

MAX_BATCH = 200
COMMIT_WAIT_SECONDS = 30
DISPATCH_CHUNK = 50  # ids per hooks.process_deliveries message
# A message costs about as much CPU as storing ten deliveries. After a quiet spell the first ids leave at once,
# then at most one message per this window, unless DISPATCH_CHUNK ids are ready first.
COALESCE_SECONDS = 0.05


class AutomationGone(Exception):
    """The automation was deleted between the key lookup and the insert."""


@dataclass(slots=True, eq=False)
class Accepted:
    """The columns an accepted request sets (statements.ACCEPTED), and the row's id once stored.

    Not a Delivery: under load, building the instance was 7% of a process's busy time (benchmarks/RESULTS.md).
    """

    automation_id: int
    method: str
    path: str
    query_string: str
    content_type: str
    body: bytes
    body_digest: str
    public_id: uuid.UUID = field(default_factory=uuid.uuid4)
    pk: int | None = None


def store(row: Accepted, *, publish: bool = True) -> None:
    """Commit the row alone, outside any transaction (its foreign key is checked at that commit), and (publish)
    queue its run. Raises AutomationGone if its automation no longer exists, DatabaseError if the row is not stored.
    """
    try:
        with transaction.atomic():
            statements.insert_deliveries([row])
    except IntegrityError:
        if Automation.objects.filter(pk=row.automation_id).exists():
            raise
        raise AutomationGone() from None
    if publish:
        transaction.on_commit(lambda: _publish([row.pk]), robust=True)


class Writer:
    """The thread that commits the rows of every event loop of its process in batches."""

    def __init__(self):
        self.queue: queue.SimpleQueue = queue.SimpleQueue()  # (row, future) pairs; None ends the thread
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    async def store(self, row: Accepted) -> None:
        """Return once the row is committed with those waiting beside it; raises as store() does."""
        with self.lock:  # a forked process (gunicorn's workers) starts a thread of its own
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="delivery-writer", daemon=True)
                self.thread.start()
        done = asyncio.get_running_loop().create_future()  # set to None, or to the error that kept the row out
        self.queue.put((row, done))
        try:
            async with asyncio.timeout(COMMIT_WAIT_SECONDS):
                error = await done
        except TimeoutError:
            raise DatabaseError("the delivery was not committed in time") from None
        if error is not None:
            raise error

    def stop(self) -> None:
        """Commit and queue what is waiting, then end the thread (within 10 s) and close its connection."""
        thread = self.thread
        if thread is not None and thread.is_alive():
            self.queue.put(None)
            thread.join(10)
        with self.lock:
            if self.thread is thread:
                self.thread = None

    def _run(self) -> None:
        unsent, sent_at, running = [], float("-inf"), True
        while running:
            batch = []
            try:  # with ids unsent, wait no longer than their message is due
                batch.append(
                    self.queue.get(timeout=max(0, sent_at + COALESCE_SECONDS - time.monotonic()) if unsent else None)
                )
                while batch[-1] is not None and len(batch) < MAX_BATCH:
                    batch.append(self.queue.get_nowait())
            except queue.Empty:
                pass
            running = None not in batch
            if rows := [item for item in batch if item is not None]:
                unsent += _commit(rows)
            now = time.monotonic()
            if unsent and (not running or len(unsent) >= DISPATCH_CHUNK or now >= sent_at + COALESCE_SECONDS):
                _publish(unsent)
                unsent, sent_at = [], now
        connections.close_all()


def _commit(batch: list) -> list[int]:
    """Commit the batch's rows (each alone if the batch fails, so that only a faulty row fails), wake their
    requests, and return the ids left to queue. A request is told "stored" only for a row known to be committed."""
    rows = [row for row, _ in batch]
    try:
        statements.insert_deliveries(rows)
        errors, committed = [None] * len(rows), [row.pk for row in rows]
    except Exception:  # a database error, or a value that could not even be sent
        if connection.connection is not None and not connection.is_usable():
            connection.close()  # a broken connection is replaced for the retries, not reused
        errors = [_insert_failure(row) for row in rows]
        committed = [row.pk for row, error in zip(rows, errors, strict=True) if error is None]
    waiting: dict[asyncio.AbstractEventLoop, list] = {}
    for (_, done), error in zip(batch, errors, strict=True):
        waiting.setdefault(done.get_loop(), []).append((done, error))
    for loop, answers in waiting.items():
        try:  # one wake-up per loop and batch
            loop.call_soon_threadsafe(_resolve, answers)
        except RuntimeError:  # the loop has closed: nobody is waiting any more
            pass
    return committed


def _insert_failure(row: Accepted) -> Exception | None:
    """The error that keeps the row out when it is inserted alone, or None once it is committed."""
    try:
        store(row, publish=False)  # the writer queues what it commits itself
    except Exception as error:
        if not isinstance(error, AutomationGone | DatabaseError):  # a value that could not even be sent
            logger.exception("a delivery's row could not be sent to the database")
        return error
    return None


def _resolve(answers: list) -> None:
    for done, error in answers:
        if not done.done():  # one that timed out was cancelled
            done.set_result(error)


def _publish(ids: list[int]) -> None:
    """Queue the runs of committed deliveries as hooks.process_deliveries tasks, DISPATCH_CHUNK ids per message."""
    for start in range(0, len(ids), DISPATCH_CHUNK):
        chunk = ids[start : start + DISPATCH_CHUNK]
        try:
            # Celery's own repr of the arguments (for logs and monitors) costs more than the rest of the message.
            tasks.process_deliveries.apply_async((chunk,), argsrepr=repr((chunk,)))
        except Exception:  # the rows are committed: the sweeper queues them
            logger.warning("could not queue %d deliveries; the sweeper will", len(chunk), exc_info=True)


writer = Writer()
stop = process_cache.on_reset(writer.stop)  # tests end the thread and its connection; the next store starts one
atexit.register(writer.stop)
