"""The raw SQL of deliveries, with column lists built from the models.

The ORM costs more than the work on the hottest paths (benchmarks/RESULTS.md):
accepted webhooks are stored many rows to one INSERT (hooks/intake.py), and
each delivery a worker takes is checked for duplicates by one SELECT, both
built once per process. Every
column name and value here comes from the model's fields, so a field added
to Delivery cannot be silently left out (hooks/tests/test_statements.py).
"""

import functools
import threading

import psycopg
import psycopg.errors
from django.db import connection
from django.utils import timezone
from psycopg import pq

from automations.models import Run
from hooks.models import Delivery


def column(model, name: str) -> str:
    """A field's column, quoted."""
    return connection.ops.quote_name(model._meta.get_field(name).column)


def db_value(model, name: str, value):
    """A value as the ORM sends it for this field (a UUID as hex on SQLite, say)."""
    return model._meta.get_field(name).get_db_prep_save(value, connection)


def original_run(delivery: Delivery, *, completed: tuple[str, ...], waiting: str, since, queued: str) -> int | None:
    """The newest run of another delivery of the automation with the same body that completed or waits since then:
    the run the delivery became, or one of its retries (Run.retry_of).

    completed: the statuses of a completed run (finished since); waiting: a
    waiting run's status (started since); queued: what a run queued for its
    start waits for (automations.runs.START), which is not yet a run that
    waits: it may still fail.
    """
    params = [
        delivery.automation_id,
        delivery.body_digest,
        delivery.pk,
        *[db_value(Run, "status", status) for status in completed],
        db_value(Run, "finished_at", since),
        db_value(Run, "status", waiting),
        db_value(Run, "started_at", since),
        queued,
    ]
    with connection.cursor() as cursor:
        cursor.execute(original_run_sql(len(completed)), params)
        row = cursor.fetchone()
    return row[0] if row else None


@functools.cache
def original_run_sql(completed: int) -> str:
    """original_run's SELECT, for that many completed statuses.

    Compiled by the ORM for every delivery, it cost a worker fourteen times the
    CPU of its parameters (benchmarks/RESULTS.md, 2026-11-23, 5e919b5).
    """
    run_id, status = f"d.{column(Delivery, 'run')}", f"r.{column(Run, 'status')}"
    waiting_for = f"r.{column(Run, 'waiting_for')}"
    kind = (
        f"{waiting_for} ->> 'kind'" if connection.vendor == "postgresql" else f"json_extract({waiting_for}, '$.kind')"
    )
    return (
        f"SELECT r.{column(Run, 'id')} FROM {connection.ops.quote_name(Delivery._meta.db_table)} d "
        f"INNER JOIN {connection.ops.quote_name(Run._meta.db_table)} r "
        f"ON ({run_id} = r.{column(Run, 'id')} OR {run_id} = r.{column(Run, 'retry_of')}) "
        f"WHERE d.{column(Delivery, 'automation')} = %s AND d.{column(Delivery, 'body_digest')} = %s "
        f"AND NOT (d.{column(Delivery, 'id')} = %s) "
        f"AND (({status} IN ({', '.join(['%s'] * completed)}) AND r.{column(Run, 'finished_at')} >= %s) "
        f"OR ({status} = %s AND r.{column(Run, 'started_at')} >= %s AND COALESCE({kind}, '') <> %s)) "
        f"ORDER BY r.{column(Run, 'id')} DESC LIMIT 1"
    )


# What only a delivery to a connection's or an app's URL sets (docs/connections.md): a batch of automations'
# deliveries alone leaves them to the table (null, and account's default), so that the generic path sends and
# prepares what it did before they existed.
ROUTED = ("connection", "app", "account")
# A new delivery's columns: those an accepted request fills (hooks.intake.Accepted has an attribute for
# each), those every new delivery starts with (a callable: its value at the insert), and those the table
# fills (null, or its default). hooks/tests/test_statements.py checks that together they are Delivery's fields.
ACCEPTED = (
    "automation",
    "public_id",
    "method",
    "path",
    "query_string",
    "content_type",
    "body",
    "body_digest",
    "replay_id",
    *ROUTED,
)
STARTING = {"status": Delivery.Status.PENDING, "received_at": timezone.now}
LEFT_TO_THE_TABLE = ("id", "run", "error", "suppressed_by")
# Batches up to this size use a statement prepared on the connection (one per size); larger ones are rare.
PREPARED_BATCH = 32
BINARY = 1  # libpq's format code: every parameter and result column travels as raw bytes
# PostgreSQL's type and binary form of each kind of field an accepted request fills.
_WIRE = {
    "ForeignKey": ("bigint", lambda value: value.to_bytes(8, "big", signed=True)),
    "UUIDField": ("uuid", lambda value: value.bytes),
    "CharField": ("varchar", str.encode),
    "TextField": ("text", str.encode),
    "BinaryField": ("bytea", bytes),
}


def insert_deliveries(rows: list) -> None:
    """Insert the rows (hooks.intake.Accepted) in one statement and set each one's pk; errors are Django's.

    A row with a replay_id (a signed delivery) that an earlier delivery of
    its automation has, or one before it in the same statement, is not
    inserted and keeps pk None: the statement of a batch holding a signed
    row skips it (ON CONFLICT DO NOTHING on the partial unique index), so a
    replay costs its batch nothing. Batches of unsigned rows alone use the
    plain INSERT.

    Outside a transaction the statement commits on its own. On PostgreSQL it
    is prepared once per batch size on the connection and sent through libpq
    with every value in binary: Django's bulk_create builds and quotes the
    statement in Python on every call, and psycopg's execute adapts each
    value in Python, several times the CPU of this (benchmarks/RESULTS.md). On SQLite the same statement goes through
    Django's cursor, with the values prepared as the ORM prepares them.
    """
    routed = any(row.automation_id is None for row in rows)
    fields = sent_fields(routed)
    signed = any(row.replay_id is not None for row in rows)
    if connection.vendor != "postgresql":
        starting = [
            field.get_db_prep_save(value() if callable(value) else value, connection)
            for field, value in zip(
                [Delivery._meta.get_field(name) for name in STARTING], STARTING.values(), strict=True
            )
        ]
        values = [
            value
            for row in rows
            for value in [field.get_db_prep_save(getattr(row, field.attname), connection) for field in fields]
            + starting
        ]
        with connection.cursor() as cursor:
            cursor.execute(insert_sql(len(rows), postgresql=False, signed=signed, routed=routed), values)
            ids = {public_id: pk for pk, public_id in cursor.fetchall()}
        for row in rows:
            row.pk = ids.get(fields[1].get_db_prep_save(row.public_id, connection))
        return
    values = wire_values(rows, fields)
    formats = [BINARY] * len(values)
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    with connection.wrap_database_errors:
        if connection.in_atomic_block and pgconn.transaction_status == pq.TransactionStatus.IDLE:
            checked_result(
                pgconn, pgconn.exec_(b"BEGIN")
            )  # the atomic block has not sent its BEGIN yet (psycopg waits)
        if len(rows) <= PREPARED_BATCH:
            prepared = _prepared(pgconn, len(rows), signed, routed)
            result = checked_result(pgconn, pgconn.exec_prepared(prepared, values, formats, BINARY))
        else:
            sql = insert_sql(len(rows), postgresql=True, signed=signed, routed=routed).encode()
            result = checked_result(pgconn, pgconn.exec_params(sql, values, None, formats, BINARY))
    set_ids(rows, result)


def wire_values(rows: list, fields: list) -> list:
    """The rows' values for libpq, each in PostgreSQL's binary form."""
    return [
        None if (value := getattr(row, field.attname)) is None else _WIRE[field.get_internal_type()][1](value)
        for row in rows
        for field in fields
    ]


def set_ids(rows: list, result) -> None:
    """Each row's pk from the INSERT's RETURNING; None for a replay the statement skipped."""
    ids = {
        result.get_value(n, 1): int.from_bytes(result.get_value(n, 0), "big", signed=True)
        for n in range(result.ntuples)
    }
    for row in rows:
        row.pk = ids.get(row.public_id.bytes)


def prepared_name(rows: int, signed: bool, routed: bool) -> bytes:
    """The name a connection prepares the INSERT of that many rows under."""
    return b"flowgate_insert_%s%sdeliveries_%d" % (b"signed_" if signed else b"", b"routed_" if routed else b"", rows)


@functools.cache
def sent_fields(routed: bool) -> list:
    """The fields a batch sends: every accepted one when a row of it is a connection's or an app's, else not ROUTED."""
    return [Delivery._meta.get_field(name) for name in ACCEPTED if routed or name not in ROUTED]


@functools.lru_cache(maxsize=256)
def insert_sql(rows: int, *, postgresql: bool, signed: bool = False, routed: bool = False) -> str:
    """The INSERT of rows deliveries: libpq's $1::type placeholders and the starting values inline, or Django's %s;
    signed: rows whose replay id an earlier row has are skipped; routed: the ROUTED columns are sent too."""
    quote = connection.ops.quote_name
    fields = sent_fields(routed)
    starting = [Delivery._meta.get_field(name) for name in STARTING]
    width = len(fields)
    if postgresql:
        inline = [
            "now()" if callable(value) else f"'{value}'" if isinstance(value, str) else str(int(value))
            for value in STARTING.values()
        ]
        values = ", ".join(
            "("
            + ", ".join(
                [f"${row * width + n + 1}::{_WIRE[field.get_internal_type()][0]}" for n, field in enumerate(fields)]
                + inline
            )
            + ")"
            for row in range(rows)
        )
    else:
        values = ", ".join("(" + ", ".join(["%s"] * (width + len(starting))) + ")" for _ in range(rows))
    columns = ", ".join(quote(field.column) for field in fields + starting)
    automation, replay_id = (quote(Delivery._meta.get_field(name).column) for name in ("automation", "replay_id"))
    # The conflict target names the partial unique index alone, so that any other error still raises.
    skip = f"ON CONFLICT ({automation}, {replay_id}) WHERE {replay_id} IS NOT NULL DO NOTHING " if signed else ""
    return (
        f"INSERT INTO {quote(Delivery._meta.db_table)} ({columns}) VALUES {values} {skip}"
        f"RETURNING {quote(Delivery._meta.pk.column)}, {quote(fields[1].column)}"
    )


class _PreparedHere(threading.local):
    """The batch sizes prepared on this thread's current libpq connection (a new connection starts empty)."""

    def __init__(self):
        self.pgconn: pq.abc.PGconn | None = None
        self.sizes: set[int] = set()


_prepared_here = _PreparedHere()


def _prepared(pgconn: pq.abc.PGconn, rows: int, signed: bool, routed: bool = False) -> bytes:
    here = _prepared_here
    if here.pgconn is not pgconn:
        here.pgconn, here.sizes = pgconn, set()
    name = prepared_name(rows, signed, routed)
    if (rows, signed, routed) not in here.sizes:
        sql = insert_sql(rows, postgresql=True, signed=signed, routed=routed)
        checked_result(pgconn, pgconn.prepare(name, sql.encode()))
        here.sizes.add((rows, signed, routed))
    return name


def checked_result(pgconn: pq.abc.PGconn, result: pq.abc.PGresult) -> pq.abc.PGresult:
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
