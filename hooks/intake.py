"""Accepted deliveries stored and their runs queued (docs/webhooks.md, contract 1).

The hooks process's event loop hands each accepted row to one writer thread
per process, which commits the rows of all requests waiting at that moment
in one INSERT (hooks/statements.py), wakes each loop once for all its
requests, and sends the committed ids as a few tasks. If a batch fails, its
rows are retried one by one so that only the faulty row fails. A request
that waited COMMIT_WAIT_SECONDS gets an error (500) even if its row commits
later; that row still runs. Django's view (a setup without the hooks
process) stores its one row in a transaction of its own. Rows committed but
never queued are queued by the sweeper (hooks.services.sweep).
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
DISPATCH_CHUNK = 50
# A message costs about as much CPU as storing ten deliveries. After a quiet spell the first ids leave at once,
# then at most one message per this window, unless DISPATCH_CHUNK ids are ready first.
COALESCE_SECONDS = 0.05
_STOP = object()  # queued to end the writer thread


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


class _Writer:
    """The thread that commits every event loop's rows in batches, wakes each loop once per batch, and queues runs."""

    def __init__(self):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()  # (row, future) pairs, and _STOP
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    async def store(self, row: Accepted) -> None:
        done = asyncio.get_running_loop().create_future()  # set to None, or to the error that kept the row out
        if self._thread is None or not self._thread.is_alive():
            with self._lock:  # a forked process (gunicorn's workers) starts a thread of its own
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name="delivery-writer", daemon=True)
                    self._thread.start()
        self._queue.put((row, done))
        try:
            async with asyncio.timeout(COMMIT_WAIT_SECONDS):
                error = await done
        except TimeoutError:
            raise DatabaseError("the delivery was not committed in time") from None
        if error is not None:
            raise error

    def stop(self) -> None:
        """Commit and queue what is waiting, then end the thread and close its connection."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(_STOP)
            thread.join(10)
        self._thread = None

    def _run(self) -> None:
        unsent, sent_at, item = [], float("-inf"), None
        while item is not _STOP:
            try:  # with ids unsent, wait no longer than their message's time
                item = self._queue.get(
                    timeout=max(0.0, sent_at + COALESCE_SECONDS - time.monotonic()) if unsent else None
                )
            except queue.Empty:
                item = None
            batch = [] if item is None or item is _STOP else [item]
            while batch and len(batch) < MAX_BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:  # stop after this batch
                    break
                batch.append(item)
            if batch:
                unsent += _commit(batch)
            now = time.monotonic()
            if unsent and (item is _STOP or len(unsent) >= DISPATCH_CHUNK or now >= sent_at + COALESCE_SECONDS):
                _publish(unsent)
                unsent, sent_at = [], now
        connections.close_all()


def _commit(batch: list) -> list[int]:
    """Commit the batch's rows (each alone if the batch fails, so that only a faulty row fails), wake their
    requests, and return the ids committed. A request is told "stored" only for a row known to be committed."""
    rows = [row for row, _ in batch]
    try:
        insert(rows)
        errors = [None] * len(rows)
    except Exception:  # a database error, or a value that could not even be sent
        if connection.connection is not None and not connection.is_usable():
            connection.close()  # a broken connection is replaced for the retries, not reused
        errors = [_commit_one(row) for row in rows]
    waiting: dict[asyncio.AbstractEventLoop, list] = {}
    for (_, done), error in zip(batch, errors, strict=True):
        waiting.setdefault(done.get_loop(), []).append((done, error))
    for loop, answers in waiting.items():
        try:
            loop.call_soon_threadsafe(_resolve, answers)
        except RuntimeError:  # the loop has closed: nobody is waiting any more
            pass
    return [row.pk for row, error in zip(rows, errors, strict=True) if error is None]


def _commit_one(row: Accepted) -> Exception | None:
    try:
        insert([row])
    except IntegrityError as error:
        return AutomationGone() if not Automation.objects.filter(pk=row.automation_id).exists() else error
    except Exception as error:  # only this request is refused: its row is not stored
        if not isinstance(error, DatabaseError):
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


writer = _Writer()
atexit.register(writer.stop)


@process_cache.on_reset
def stop() -> None:
    """End the writer thread and close its database connection (tests; it starts again on the next store)."""
    writer.stop()


def insert(rows: list[Accepted]) -> None:
    """Insert and commit the rows, all or none, and set their ids (a transaction of its own unless in one)."""
    statements.insert_deliveries(rows)


def store(row: Accepted) -> None:
    """Commit the delivery's row and queue its run, as Django's view does: one row, one transaction.

    Raises AutomationGone if its automation no longer exists, DatabaseError if the row could not be stored.
    """
    # Foreign keys are checked at commit; inside the caller's transaction that is the caller's: ask first.
    if connection.in_atomic_block and not Automation.objects.filter(pk=row.automation_id).exists():
        raise AutomationGone()
    try:
        with transaction.atomic():
            insert([row])
            transaction.on_commit(lambda: _publish([row.pk]), robust=True)
    except IntegrityError:
        if Automation.objects.filter(pk=row.automation_id).exists():
            raise
        raise AutomationGone() from None


async def store_async(row: Accepted) -> None:
    """Commit the row with others waiting at the same moment (group commit); returns once it is committed.

    The event loop awaits its commit instead of blocking a thread on it. Raises as store() does.
    """
    await writer.store(row)
