"""The raw SQL of deliveries, with column lists built from the models.

The ORM costs more than the work on the hottest paths (benchmarks/RESULTS.md):
the delivery claim is one UPDATE ... RETURNING. Every column name and value
here comes from the model's fields, so a field added to Delivery cannot be
silently left out (hooks/tests/test_statements.py).
"""
from django.db import connection

from hooks.models import Delivery


def quoted_columns(model) -> str:
    return ", ".join(connection.ops.quote_name(field.column) for field in model._meta.concrete_fields)


def assignments(model, values: dict) -> tuple[str, list]:
    """SET clause and parameters for these field values, prepared as the ORM prepares them for saving."""
    clause = ", ".join(f"{connection.ops.quote_name(model._meta.get_field(name).column)} = %s" for name in values)
    return clause, [db_value(model, name, value) for name, value in values.items()]


def db_value(model, name: str, value):
    """A value as the ORM sends it for this field (a UUID as hex on SQLite, say)."""
    return model._meta.get_field(name).get_db_prep_save(value, connection)


def claim(delivery_id: int, changes: dict, now) -> Delivery | None:
    """Apply changes to the delivery if it is pending and due, or running under a lapsed lease; count an attempt.

    Returns the row as updated, or None if another worker holds it or it is
    not due. Conditions are on the row's own columns only: PostgreSQL
    re-checks those against a concurrent claimer's committed row, but not a
    subquery (which a join in the filter would become).
    """
    table = connection.ops.quote_name(Delivery._meta.db_table)
    column = {name: connection.ops.quote_name(Delivery._meta.get_field(name).column)
              for name in ("id", "status", "not_before", "lease_until", "attempts")}
    sets, params = assignments(Delivery, changes)
    now_param = db_value(Delivery, "lease_until", now)
    rows = Delivery.objects.raw(
        f"UPDATE {table} SET {sets}, {column['attempts']} = {column['attempts']} + 1 "
        f"WHERE {column['id']} = %s AND (({column['status']} = %s AND ({column['not_before']} IS NULL "
        f"OR {column['not_before']} <= %s)) OR ({column['status']} = %s AND {column['lease_until']} < %s)) "
        f"RETURNING {quoted_columns(Delivery)}",
        [*params, delivery_id, Delivery.Status.PENDING, now_param, Delivery.Status.RUNNING, now_param],
    )
    return next(iter(rows), None)
