"""Tests' stand-in for the INSERTs the writer sends (hooks/intake.py): a batch, and a row retried alone."""

import asyncio

from hooks import intake, statements


class _OnThread:
    """A stand-in for the writer's loop connection (hooks/loop_connection.py): each batch goes to insert(rows) on
    the writer's thread."""

    def __init__(self, insert):
        self.rows_to = insert

    async def insert(self, rows, thread) -> None:
        await asyncio.get_running_loop().run_in_executor(thread, self.rows_to, rows)

    def close(self) -> None:
        pass


def inserts_through(monkeypatch, insert) -> None:
    """Every INSERT of rows the writer sends calls insert(rows) on its thread instead: a batch (which goes on the
    event loop's own connection on PostgreSQL, on the thread on SQLite) and a row retried alone
    (statements.insert_deliveries), for the process's writer and every writer made from now on."""
    monkeypatch.setattr(intake, "LoopConnection", lambda: _OnThread(insert))
    monkeypatch.setattr(intake.writer, "on_loop", _OnThread(insert))
    monkeypatch.setattr(statements, "insert_deliveries", insert)
