"""Tests' stand-in for the INSERTs the writer sends (hooks/intake.py): a batch, and a row retried alone."""

import asyncio

from hooks import intake, statements


def inserts_through(monkeypatch, insert) -> None:
    """Every INSERT of rows the writer sends calls insert(rows) on its thread instead: a batch (which goes on the
    event loop's own connection on PostgreSQL) and a row retried alone (statements.insert_deliveries)."""

    async def batch(writer, rows):
        await asyncio.get_running_loop().run_in_executor(writer.thread, insert, rows)

    monkeypatch.setattr(intake.Writer, "_insert", batch)
    monkeypatch.setattr(statements, "insert_deliveries", insert)
