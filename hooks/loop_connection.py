"""The writer's PostgreSQL connection, driven by the hooks process's event loop: no thread between a group of
accepted rows and their commit.

A profile of the hooks process under load put a sixth of a webhook's CPU in handing each group to the writer's
thread and waking it (benchmarks/RESULTS.md, 2026-11-28). Here the INSERT goes through libpq's asynchronous
calls (psycopg.pq, psycopg's documented libpq wrapper): sent, then read as the socket becomes readable, on the
loop. Connecting, which libpq does not do without blocking here, is done on the writer's thread, once per
connection.
"""

import asyncio

import psycopg
from django.db import connection
from psycopg import pq

from hooks import statements


class LoopConnection:
    """One libpq connection, used by one event loop, one statement at a time."""

    def __init__(self):
        self.conn: psycopg.Connection | None = None
        self.prepared: set[bytes] = set()
        self.in_use = False  # a statement is under way on the loop
        self.close_after = False  # close() was called meanwhile: the statement closes the connection once it ends

    async def insert(self, rows: list, thread) -> None:
        """statements.insert_deliveries, as one statement of its own (autocommit); raises psycopg's errors."""
        loop = asyncio.get_running_loop()
        self.in_use = True
        try:
            if self.conn is None or self.conn.pgconn.status != pq.ConnStatus.OK:
                self._close()
                self.conn = await loop.run_in_executor(thread, _connect)
            await self._insert(loop, self.conn.pgconn, rows)
        finally:
            self.in_use = False
            if self.close_after:
                self._close()

    async def _insert(self, loop, pgconn: pq.abc.PGconn, rows: list) -> None:
        try:
            routed = any(row.automation_id is None for row in rows)
            signed = any(row.replay_id is not None for row in rows)
            values = statements.wire_values(rows, statements.sent_fields(routed))
            formats = [statements.BINARY] * len(values)
            if len(rows) <= statements.PREPARED_BATCH:
                name = statements.prepared_name(len(rows), signed, routed)
                if name not in self.prepared:
                    sql = statements.insert_sql(len(rows), postgresql=True, signed=signed, routed=routed)
                    pgconn.send_prepare(name, sql.encode())
                    await _result(loop, pgconn)
                    self.prepared.add(name)
                pgconn.send_query_prepared(name, values, formats, statements.BINARY)
            else:
                sql = statements.insert_sql(len(rows), postgresql=True, signed=signed, routed=routed)
                pgconn.send_query_params(sql.encode(), values, None, formats, statements.BINARY)
            statements.set_ids(rows, await _result(loop, pgconn))
        except psycopg.Error as error:
            if pgconn.status != pq.ConnStatus.OK or pgconn.transaction_status != pq.TransactionStatus.IDLE:
                self._close()  # broken, or left inside a statement: never reused
            elif error.sqlstate == "26000":  # a prepared statement the server no longer has: prepared again next time
                self.prepared.clear()
            raise
        except BaseException:
            self._close()  # cancelled mid-statement, or a value that could not be sent: never reused
            raise

    def close(self) -> None:
        """Close the connection; one a statement is using on the loop (stop() may come from another thread) is
        closed by that statement once it ends, since libpq's connection is not for two threads at once."""
        if self.in_use:
            self.close_after = True
        else:
            self._close()

    def _close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn, self.prepared, self.close_after = None, set(), False


def _connect() -> psycopg.Connection:
    conn = psycopg.Connection.connect(**connection.get_connection_params(), autocommit=True)
    conn.pgconn.nonblocking = 1
    return conn


async def _result(loop, pgconn: pq.abc.PGconn) -> pq.abc.PGresult:
    """The last result of the statement just sent, once libpq has all of it; raises psycopg's error for a failure."""
    fd = pgconn.socket
    while pgconn.flush():  # libpq's rule: while output is pending, also read what the server sends meanwhile
        await _ready(loop, fd, loop.add_writer, loop.remove_writer)
        pgconn.consume_input()
    results = []
    while True:
        while pgconn.is_busy():
            await _ready(loop, fd, loop.add_reader, loop.remove_reader)
            pgconn.consume_input()
        result = pgconn.get_result()
        if result is None:
            break
        results.append(result)
    for result in results:
        statements.checked_result(pgconn, result)
    return results[-1]


async def _ready(loop, fd: int, add, remove) -> None:
    ready = loop.create_future()
    add(fd, lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        remove(fd)
