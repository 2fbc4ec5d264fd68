"""Storing accepted deliveries with group commit, and queueing their runs in batches.

Every accepted webhook needs its row committed before the 200 goes out
(DESIGN.md contract 1). One INSERT and one commit per request, and one broker
publish per request, cost most of a webhook's time (benchmarks/RESULTS.md).
So in each web process one writer thread commits the rows of all requests
waiting at that moment in one INSERT statement (its own transaction), then
wakes each request; and one dispatcher thread sends the ids committed
meanwhile as a few tasks. A request never waits for more than the commit it
is part of: at low traffic a batch is one row.

A request that is itself inside a transaction (a test, a shell) stores its
row in that transaction and queues its run on commit, as Django does.

If a web process dies after committing but before publishing, the sweeper
queues the deliveries (hooks.services.sweep). If a batch fails, its rows are
retried one by one so that only the faulty row (say, of an automation deleted
a moment ago) fails. A request that waited COMMIT_WAIT_SECONDS gets an error
(500) even if its row commits later; that row still runs, and a sender that
retries is met by duplicate suppression.
"""
import asyncio
import atexit
import functools
import logging
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field

import psycopg
import psycopg.errors
from psycopg import pq
from django.db import DatabaseError, IntegrityError, connection, connections, transaction

from automations.models import Automation
from hooks import tasks
from hooks.models import Delivery

logger = logging.getLogger(__name__)

MAX_BATCH = 200
# Batches up to this size use a statement prepared on the connection (one per size); larger ones are rare.
PREPARED_BATCH = 32
COMMIT_WAIT_SECONDS = 30
DISPATCH_CHUNK = 50
# A message costs about as much CPU as storing ten deliveries. After a quiet
# spell the first ids leave at once; then at most one message per this window
# leaves, with every id committed meanwhile, so that a busy process sends one
# message per many commits. A message leaves early once it holds
# DISPATCH_CHUNK ids, so that a burst still spreads over the workers.
COALESCE_SECONDS = 0.05
_STOP = object()  # queued to end the writer thread


class AutomationGone(Exception):
    """The automation was deleted between the key lookup and the insert."""


@dataclass(slots=True, eq=False)
class Accepted:
    """An accepted request on its way to its Delivery row: the columns a request sets, and the row's id once stored.

    A plain record rather than a Delivery instance: under load, building the
    model instance was 7% of a web process's busy time (benchmarks/RESULTS.md),
    and the request needs none of what a model does.
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

    def as_delivery(self) -> Delivery:
        return Delivery(**{column: getattr(self, column) for column in _COLUMNS}, pk=self.pk)


class _Ticket:
    """One request waiting for its row: the writer releases `done` once the row is committed or has failed.

    `done` is a lock a request thread waits on, or a future a coroutine awaits
    on an event loop (hooks/asgi.py).
    """

    __slots__ = ("row", "done", "committed", "error")

    def __init__(self, row: Accepted, done: asyncio.Future | None = None):
        self.row = row
        if done is None:
            # A bare lock is the cheapest hand-off between two threads: taken now, released by the writer.
            done = threading.Lock()
            done.acquire()
        self.done = done
        self.committed = False
        self.error: BaseException | None = None


class _Writer:
    def __init__(self):
        self._queue: queue.SimpleQueue[_Ticket] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def store(self, row: Accepted) -> None:
        ticket = _Ticket(row)
        self._ensure_thread()
        self._queue.put(ticket)
        if not ticket.done.acquire(timeout=COMMIT_WAIT_SECONDS):
            raise DatabaseError("the delivery was not committed in time")
        if not ticket.committed:
            raise ticket.error or DatabaseError("the delivery was not committed")

    async def store_async(self, row: Accepted) -> None:
        ticket = _Ticket(row, asyncio.get_running_loop().create_future())
        self._ensure_thread()
        self._queue.put(ticket)
        try:
            async with asyncio.timeout(COMMIT_WAIT_SECONDS):
                await ticket.done
        except TimeoutError:
            raise DatabaseError("the delivery was not committed in time") from None
        if not ticket.committed:
            raise ticket.error or DatabaseError("the delivery was not committed")

    def stop(self) -> None:
        """Let the writer finish what is queued, then end its thread and close its connection."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(_STOP)
            thread.join(10)
        self._thread = None

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            with self._lock:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name="delivery-writer", daemon=True)
                    self._thread.start()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                connections.close_all()
                return
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

    def _commit_one(self, ticket: _Ticket) -> None:
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
    """Wake every request of the batch: a thread through its lock, and each event loop once for all its requests.

    One wake-up per loop rather than per request is what lets a process on
    an event loop answer a batch for the price of one switch (docs/webhooks.md).
    """
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


_COLUMNS = ("automation_id", "public_id", "method", "path", "query_string", "content_type", "body", "body_digest")
_TYPES = ("bigint", "uuid", "varchar", "varchar", "text", "varchar", "bytea", "varchar")
_BINARY = 1  # libpq's format code: every parameter and result column travels as raw bytes


@functools.lru_cache(maxsize=MAX_BATCH)
def _insert_statement(rows: int) -> bytes:
    values = ", ".join(
        "(" + ", ".join(f"${row * len(_COLUMNS) + n + 1}::{kind}" for n, kind in enumerate(_TYPES))
        + f", '{Delivery.Status.PENDING.value}', now(), 0)"
        for row in range(rows)
    )
    return (
        f"INSERT INTO {Delivery._meta.db_table} ({', '.join(_COLUMNS)}, status, received_at, attempts) "
        f"VALUES {values} RETURNING id, public_id"
    ).encode()


def insert(rows: list[Accepted]) -> None:
    """Insert and commit the rows, all or none, and set their ids.

    On PostgreSQL one multi-row INSERT, prepared once per batch size and
    committed on its own, sent through libpq with every value in binary.
    Django's bulk_create builds and quotes the statement in Python on every
    call, and a transaction around it costs two more round trips; psycopg's
    own execute adapts each value in Python, which cost four to five times the
    CPU of this for a batch of 16 (benchmarks/RESULTS.md). Errors are Django's.
    """
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        with transaction.atomic():
            deliveries = Delivery.objects.bulk_create([row.as_delivery() for row in rows])
        for row, delivery in zip(rows, deliveries):
            row.pk = delivery.pk
        return
    values = []
    for row in rows:
        values += (
            row.automation_id.to_bytes(8, "big", signed=True), row.public_id.bytes, row.method.encode(),
            row.path.encode(), row.query_string.encode(), row.content_type.encode(), row.body, row.body_digest.encode(),
        )
    formats = [_BINARY] * len(values)
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    with connection.wrap_database_errors:
        if len(rows) <= PREPARED_BATCH:
            name = _prepared(pgconn, len(rows))
            result = _checked(pgconn, pgconn.exec_prepared(name, values, formats, _BINARY))
        else:
            result = _checked(pgconn, pgconn.exec_params(_insert_statement(len(rows)), values, None, formats, _BINARY))
    ids = {result.get_value(n, 1): int.from_bytes(result.get_value(n, 0), "big", signed=True) for n in range(result.ntuples)}
    for row in rows:
        row.pk = ids[row.public_id.bytes]


class _PreparedHere(threading.local):
    """The batch sizes prepared on this thread's current libpq connection (a new connection starts empty)."""

    def __init__(self):
        self.pgconn: pq.abc.PGconn | None = None
        self.sizes: set[int] = set()


_prepared_here = _PreparedHere()


def _prepared(pgconn: pq.abc.PGconn, rows: int) -> bytes:
    here = _prepared_here
    if here.pgconn is not pgconn:
        here.pgconn, here.sizes = pgconn, set()
    name = b"flowgate_insert_deliveries_%d" % rows
    if rows not in here.sizes:
        _checked(pgconn, pgconn.prepare(name, _insert_statement(rows)))
        here.sizes.add(rows)
    return name


def _checked(pgconn: pq.abc.PGconn, result: pq.abc.PGresult) -> pq.abc.PGresult:
    """The result, or psycopg's exception for its SQLSTATE, which Django's error wrapper then translates."""
    if result.status in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
        return result
    message = (result.error_message or pgconn.error_message).decode("utf-8", "replace").strip()
    if pgconn.status != pq.ConnStatus.OK:
        raise psycopg.OperationalError(message)
    sqlstate = result.error_field(pq.DiagnosticField.SQLSTATE)
    try:
        error = psycopg.errors.lookup(sqlstate.decode()) if sqlstate else psycopg.DatabaseError
    except KeyError:
        error = psycopg.DatabaseError
    raise error(message)


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
        last = float("-inf")  # when the previous message left
        while True:
            with self._wake:
                while not self._pending and not self._stopping:
                    self._wake.wait()
                until = last + COALESCE_SECONDS
                while len(self._pending) < DISPATCH_CHUNK and not self._stopping and (left := until - time.monotonic()) > 0:
                    self._wake.wait(left)
                ids, self._pending = self._pending, []
                stopping = self._stopping
            last = time.monotonic()
            self._publish(ids)
            if stopping:
                connections.close_all()
                return

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
            chunk = ids[start:start + DISPATCH_CHUNK]
            try:
                # Celery's own repr of the arguments (for logs and monitors) costs more than the rest of the message.
                tasks.process_deliveries.apply_async((chunk,), argsrepr=repr((chunk,)))
            except Exception:  # the rows are committed: the sweeper queues them
                logger.warning("could not queue %d deliveries; the sweeper will", len(chunk), exc_info=True)


writer = _Writer()
dispatcher = _Dispatcher()
atexit.register(dispatcher.flush)


def stop() -> None:
    """End both threads and close their database connections (tests; they start again on the next store)."""
    writer.stop()
    dispatcher.stop()


async def store_async(row: Accepted) -> None:
    """store() for a coroutine on an event loop: awaits the commit instead of blocking a thread on it."""
    await writer.store_async(row)


def store(row: Accepted) -> None:
    """Commit the delivery's row, set row.pk and queue its run; returns once the row is committed.

    Raises AutomationGone if its automation no longer exists, DatabaseError if the row could not be stored.
    """
    if connection.in_atomic_block:
        if not Automation.objects.filter(pk=row.automation_id).exists():
            raise AutomationGone()
        insert([row])
        transaction.on_commit(lambda: dispatcher._publish([row.pk]), robust=True)
        return
    writer.store(row)
