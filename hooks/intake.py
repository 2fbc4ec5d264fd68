"""Accepted deliveries stored with group commit, their runs queued in batches (docs/webhooks.md, contract 1).

In each process one writer thread commits the rows of all requests waiting
at that moment in one INSERT (hooks/statements.py), then wakes them; one
dispatcher thread sends the ids committed meanwhile as a few tasks. If a
batch fails, its rows are retried one by one so that only the faulty row
fails. A request that waited COMMIT_WAIT_SECONDS gets an error (500) even if
its row commits later; that row still runs. Rows committed but never sent
are queued by the sweeper (hooks.services.sweep).
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


class _Ticket:
    """A request waiting for its row: `done` is a lock its thread waits on, or a future its event loop awaits."""

    __slots__ = ("row", "done", "committed", "error")

    def __init__(self, row: Accepted, done: asyncio.Future | None = None):
        self.row, self.committed, self.error = row, False, None
        if done is None:
            done = threading.Lock()  # the cheapest hand-off between two threads: taken now, released by the writer
            done.acquire()
        self.done = done

    def outcome(self, arrived: bool) -> None:
        if not arrived:
            raise DatabaseError("the delivery was not committed in time")
        if not self.committed:
            raise self.error or DatabaseError("the delivery was not committed")


class _Writer:
    def __init__(self):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def store(self, row: Accepted) -> None:
        ticket = self._queued(_Ticket(row))
        ticket.outcome(ticket.done.acquire(timeout=COMMIT_WAIT_SECONDS))

    async def store_async(self, row: Accepted) -> None:
        ticket = self._queued(_Ticket(row, asyncio.get_running_loop().create_future()))
        try:
            async with asyncio.timeout(COMMIT_WAIT_SECONDS):
                await ticket.done
        except TimeoutError:
            ticket.outcome(False)
        ticket.outcome(True)

    def stop(self) -> None:
        """Let the writer finish what is queued, then end its thread and close its connection."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(_STOP)
            thread.join(10)
        self._thread = None

    def _queued(self, ticket: _Ticket) -> _Ticket:
        if self._thread is None or not self._thread.is_alive():
            with self._lock:  # a forked process (gunicorn's workers) starts a thread of its own
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name="delivery-writer", daemon=True)
                    self._thread.start()
        self._queue.put(ticket)
        return ticket

    def _run(self) -> None:
        while (first := self._queue.get()) is not _STOP:
            batch = [first]
            while len(batch) < MAX_BATCH:
                try:
                    ticket = self._queue.get_nowait()
                except queue.Empty:
                    break
                if ticket is _STOP:
                    self._queue.put(ticket)  # stop after this batch
                    break
                batch.append(ticket)
            try:
                self._commit(batch)
            except BaseException:  # a request is told "stored" only for a row known to be committed
                logger.exception("storing %d deliveries failed", len(batch))
            finally:
                _release(batch)
        connections.close_all()

    def _commit(self, batch: list[_Ticket]) -> None:
        try:
            insert([ticket.row for ticket in batch])
        except Exception:  # a database error, or a value that could not even be sent
            if connection.connection is not None and not connection.is_usable():
                connection.close()  # a broken connection is replaced for the retries, not reused
            for ticket in batch:  # find the faulty row; the others still commit
                self._commit_one(ticket)
        else:
            for ticket in batch:
                ticket.committed = True
        dispatcher.send([ticket.row.pk for ticket in batch if ticket.committed])

    @staticmethod
    def _commit_one(ticket: _Ticket) -> None:
        try:
            insert([ticket.row])
        except IntegrityError as error:
            gone = not Automation.objects.filter(pk=ticket.row.automation_id).exists()
            ticket.error = AutomationGone() if gone else error
        except Exception as error:  # only this request is refused: its row is not stored
            if not isinstance(error, DatabaseError):
                logger.exception("a delivery's row could not be sent to the database")
            ticket.error = error
        else:
            ticket.committed = True


def _release(batch: list[_Ticket]) -> None:
    """Wake every request of the batch: a thread through its lock, an event loop once for all its requests."""
    futures: dict[asyncio.AbstractEventLoop, list[asyncio.Future]] = {}
    for ticket in batch:
        if isinstance(ticket.done, asyncio.Future):
            futures.setdefault(ticket.done.get_loop(), []).append(ticket.done)
        else:
            ticket.done.release()
    for loop, waiting in futures.items():
        try:
            loop.call_soon_threadsafe(_resolve, waiting)
        except RuntimeError:  # the loop has closed: nobody is waiting any more
            pass


def _resolve(futures: list[asyncio.Future]) -> None:
    for future in futures:
        if not future.done():  # one that timed out was cancelled
            future.set_result(None)


class _Dispatcher:
    """Sends committed delivery ids as hooks.process_deliveries tasks, many ids per message."""

    def __init__(self):
        self._pending: list[int] = []
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def send(self, ids: list[int]) -> None:
        if not ids:
            return
        with self._wake:
            self._pending.extend(ids)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="delivery-dispatcher", daemon=True)
                self._thread.start()
            if len(self._pending) >= DISPATCH_CHUNK or len(self._pending) == len(ids):
                self._wake.notify()  # a full message, or the first ids of the next one

    def _run(self) -> None:
        last, stopping = float("-inf"), False  # when the previous message left
        while not stopping:
            with self._wake:
                while not self._pending and not self._stopping:
                    self._wake.wait()
                until = last + COALESCE_SECONDS
                while len(self._pending) < DISPATCH_CHUNK and not self._stopping:
                    if (left := until - time.monotonic()) <= 0:
                        break
                    self._wake.wait(left)
                ids, self._pending, stopping = self._pending, [], self._stopping
            last = time.monotonic()
            self._publish(ids)
        connections.close_all()

    def flush(self) -> None:
        with self._wake:
            ids, self._pending = self._pending, []
        self._publish(ids)

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
            thread = self._thread
        if thread is not None:
            thread.join(10)
        self._thread, self._stopping = None, False

    @staticmethod
    def _publish(ids: list[int]) -> None:
        for start in range(0, len(ids), DISPATCH_CHUNK):
            chunk = ids[start : start + DISPATCH_CHUNK]
            try:
                # Celery's own repr of the arguments (for logs and monitors) costs more than the rest of the message.
                tasks.process_deliveries.apply_async((chunk,), argsrepr=repr((chunk,)))
            except Exception:  # the rows are committed: the sweeper queues them
                logger.warning("could not queue %d deliveries; the sweeper will", len(chunk), exc_info=True)


writer = _Writer()
dispatcher = _Dispatcher()
atexit.register(dispatcher.flush)


@process_cache.on_reset
def stop() -> None:
    """End both threads and close their database connections (tests; they start again on the next store)."""
    writer.stop()
    dispatcher.stop()


def insert(rows: list[Accepted]) -> None:
    """Insert and commit the rows, all or none, and set their ids (a transaction of its own unless in one)."""
    statements.insert_deliveries(rows)


def store(row: Accepted) -> None:
    """Commit the delivery's row, set row.pk and queue its run; returns once the row is committed.

    Raises AutomationGone if its automation no longer exists, DatabaseError if the row could not be stored.
    """
    if not connection.in_atomic_block:
        return writer.store(row)
    # Foreign keys are checked at commit, which is the caller's: ask first.
    if not Automation.objects.filter(pk=row.automation_id).exists():
        raise AutomationGone()
    insert([row])
    transaction.on_commit(lambda: dispatcher._publish([row.pk]), robust=True)


async def store_async(row: Accepted) -> None:
    """store() for a coroutine on an event loop: awaits the commit instead of blocking a thread on it."""
    await writer.store_async(row)
