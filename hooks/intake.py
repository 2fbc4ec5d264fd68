"""Accepted deliveries committed and their runs queued: one row alone, or many in one group commit.

docs/webhooks.md, "What happens to a delivery" (DESIGN.md contract 1).
"""

import asyncio
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import kombu.exceptions
import redis.exceptions
from django.db import DatabaseError, IntegrityError, connection, connections, transaction

from automations.models import Automation
from catalog.models import App
from connections.models import Connection
from edge import process_cache
from edge.outages import Outage
from hooks import statements, tasks
from hooks.loop_connection import LoopConnection

logger = logging.getLogger(__name__)

MAX_BATCH = 200
COMMIT_WAIT_SECONDS = 30
# Ids per hooks.process_deliveries message. A message costs about as much CPU as storing ten deliveries: at 50 ids
# a message, messages took a sixth of the process's CPU at 32 connections (benchmarks/RESULTS.md, 2026-11-28).
DISPATCH_CHUNK = 200
# After a quiet spell the first ids leave at once, then at most one message per this window, unless DISPATCH_CHUNK
# ids are ready first.
COALESCE_SECONDS = 0.05


class AutomationGone(Exception):
    """The automation (or the connection, or the app) was deleted between the key lookup and the insert."""


class Replayed(Exception):
    """A signed delivery whose replay id an earlier delivery of its automation has: not stored (hooks/signatures.py)."""


@dataclass(slots=True, eq=False)
class Accepted:
    """The columns an accepted request sets (statements.ACCEPTED), and the row's id once stored.

    Not a Delivery: under load, building a model instance per request is a measurable share of a process's busy
    time (benchmarks/RESULTS.md).
    """

    automation_id: int | None
    method: str
    path: str
    query_string: str
    content_type: str
    body: bytes
    body_digest: str
    replay_id: str | None = None
    # A connection's or an app's delivery (automation_id None): a worker fans it out (hooks/deliveries.py).
    connection_id: int | None = None
    app_id: int | None = None
    account: str = ""
    public_id: uuid.UUID = field(default_factory=uuid.uuid4)
    pk: int | None = None


def store(row: Accepted, *, publish: bool = True) -> None:
    """Commit the row alone, outside any transaction (its foreign key is checked at that commit), and (publish)
    queue its run. Raises AutomationGone if its automation no longer exists, Replayed if its replay id was stored
    before, DatabaseError if the row is not stored.
    """
    try:
        with transaction.atomic():
            statements.insert_deliveries([row])
    except IntegrityError:
        if _target_exists(row):
            raise
        raise AutomationGone() from None
    if row.pk is None:
        raise Replayed()
    if publish:
        transaction.on_commit(lambda: _publish([row.pk]), robust=True)


def _target_exists(row: Accepted) -> bool:
    if row.automation_id is not None:
        return Automation.objects.filter(pk=row.automation_id).exists()
    if row.connection_id is not None:
        return Connection.objects.filter(pk=row.connection_id).exists()
    return App.objects.filter(pk=row.app_id).exists()


class Writer:
    """Commits the rows of one event loop's requests (a hooks process has one) in groups, on a connection of its
    own: while one group commits, the next gathers on the loop. On PostgreSQL the loop sends each group's INSERT
    and reads its answer itself (hooks/loop_connection.py); the writer's thread connects, retries the rows of a
    failed group one by one, queues runs, and, on SQLite, commits. Their runs are queued after a quiet spell at
    once, then in at most one message per COALESCE_SECONDS unless DISPATCH_CHUNK ids are ready first.
    """

    def __init__(self):
        self.thread = ThreadPoolExecutor(1, thread_name_prefix="delivery-writer")
        self.waiting: list = []  # (row, future) pairs for the next commit
        self.unsent: list[int] = []  # committed ids whose message is not due yet
        self.sent_at = float("-inf")
        self.task: asyncio.Task | None = None  # commits while rows wait, then sends what is due
        self.arrived: asyncio.Future | None = None  # set by a row that arrives while the task waits out the window
        self.on_loop = LoopConnection()

    async def store(self, row: Accepted) -> None:
        """Return once the row is committed with those gathered beside it; raises as store() does."""
        loop = asyncio.get_running_loop()
        if self.task is not None and not self.task.done() and self.task.get_loop() is not loop:
            raise RuntimeError("the writer serves one event loop at a time")  # its futures are that loop's
        done = loop.create_future()  # set to None, or to the error that kept the row out
        self.waiting.append((row, done))
        if self.task is None or self.task.done():
            self.task, self.arrived = loop.create_task(self._run()), None
        elif self.arrived is not None and not self.arrived.done():
            self.arrived.set_result(None)
        try:
            async with asyncio.timeout(COMMIT_WAIT_SECONDS):
                error = await done
        except TimeoutError:
            if (row, done) in self.waiting:  # not in a commit yet: it never will be, so the 500 is a true refusal
                self.waiting.remove((row, done))
            raise DatabaseError("the delivery was not committed in time") from None
        if error is not None:
            raise error

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self.waiting or self.unsent:
            if self.waiting:
                batch, self.waiting = self.waiting[:MAX_BATCH], self.waiting[MAX_BATCH:]
                try:  # a loop stopped meanwhile leaves a batch committed and unqueued: the sweeper queues it
                    errors = await self._commit([row for row, _ in batch])
                except RuntimeError as refused:  # the executor took no job: nothing was committed
                    errors = [refused] * len(batch)
                for (row, done), error in zip(batch, errors, strict=True):
                    self.unsent += [row.pk] if error is None else []
                    if not done.done():  # one that timed out was cancelled
                        done.set_result(error)
            due_in = self.sent_at + COALESCE_SECONDS - time.monotonic()
            if self.unsent and (due_in <= 0 or len(self.unsent) >= DISPATCH_CHUNK):
                ids, self.unsent, self.sent_at = self.unsent, [], time.monotonic()
                self.thread.submit(_publish, ids)  # not awaited: a cancelled wait would drop a job not yet started
            elif self.unsent and not self.waiting:
                self.arrived = loop.create_future()
                await asyncio.wait([self.arrived], timeout=due_in)

    async def _commit(self, rows: list[Accepted]) -> list[Exception | None]:
        """Commit the rows together, or each alone if that fails, so that only a faulty row fails: for each, None
        once it is known to be committed, or the error that kept it out."""
        try:
            await self._insert(rows)
        except TimeoutError:  # it may still commit: sent again, it would wait as long (its public id stops a copy)
            return [DatabaseError("the delivery was not committed in time")] * len(rows)
        except Exception:  # a database error, or a value that could not even be sent
            return await asyncio.get_running_loop().run_in_executor(self.thread, _each_alone, rows)
        return [None if row.pk is not None else Replayed() for row in rows]

    async def _insert(self, rows: list[Accepted]) -> None:
        """statements.insert_deliveries: on PostgreSQL on the loop's own connection (hooks/loop_connection.py), on
        SQLite on the thread's."""
        if connection.vendor == "postgresql":
            async with asyncio.timeout(COMMIT_WAIT_SECONDS):  # a server gone silent: the connection is dropped
                await self.on_loop.insert(rows, self.thread)
        else:
            await asyncio.get_running_loop().run_in_executor(self.thread, statements.insert_deliveries, rows)

    def stop(self) -> None:
        """Queue what is committed and close the thread's and the loop's connections (no test database outlives
        them): on the event loop, or with none running."""
        # The next store starts afresh; rows a closed loop left waiting have nobody to tell they are stored.
        ids, self.unsent, self.sent_at, self.waiting = self.unsent, [], float("-inf"), []
        wait([self.thread.submit(_publish, ids), self.thread.submit(connections.close_all)], timeout=10)
        self.on_loop.close()


def _each_alone(rows: list[Accepted]) -> list[Exception | None]:
    """The rows of a batch that failed, each inserted alone on the thread's connection."""
    if connection.connection is not None and not connection.is_usable():
        connection.close()  # a broken connection is replaced for the retries, not reused
    return [_insert_failure(row) for row in rows]


def _insert_failure(row: Accepted) -> Exception | None:
    """The error that keeps the row out when it is inserted alone, or None once it is committed."""
    try:
        store(row, publish=False)  # the writer queues what it commits itself
    except Exception as error:
        if not isinstance(error, AutomationGone | Replayed | DatabaseError):  # a value that could not even be sent
            logger.exception("a delivery's row could not be sent to the database")
        return error
    return None


def _publish(ids: list[int]) -> None:
    """Queue the runs of committed deliveries as hooks.process_deliveries tasks, DISPATCH_CHUNK ids per message."""
    for start in range(0, len(ids), DISPATCH_CHUNK):
        chunk = ids[start : start + DISPATCH_CHUNK]
        try:
            # Celery's own repr of the arguments (for logs and monitors) costs more than the rest of the message.
            tasks.process_deliveries.apply_async((chunk,), argsrepr=repr((chunk,)))
        except BROKER_DOWN as error:  # the rows are committed: the sweeper queues them
            broker.left(len(chunk), error)
        except Exception:
            logger.warning("could not queue %d deliveries; the sweeper will", len(chunk), exc_info=True)
        else:
            broker.answered()


# What a broker out of reach raises through Celery (kombu wraps the client's errors in its OperationalError).
BROKER_DOWN = (kombu.exceptions.OperationalError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


class BrokerOutage(Outage):
    """The broker out of reach, as this process sees it: one log line when it goes and one when it comes back.

    Webhooks are answered 200 meanwhile (their rows are committed) and the sweeper queues them. A traceback for
    each group commit that could not be queued wrote some 110 lines a second per process under 200 webhooks a
    second while Redis restarted (benchmarks/faults.py); an error that is not the broker's absence keeps its
    traceback each time.
    """

    def __init__(self):
        meanwhile, counted = "deliveries are stored and answered as ever, and the sweeper queues them", "deliveries"
        super().__init__(
            "the broker", meanwhile, f"{counted} were left to the sweeper", log=logger, level=logging.WARNING
        )

    def left(self, count: int, error: BaseException) -> None:
        """count committed deliveries could not be queued."""
        self.went(error, count)


broker = BrokerOutage()


writer = Writer()
stop = process_cache.on_reset(writer.stop)  # around each test: no connection outlives the test database
