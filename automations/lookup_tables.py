"""A lookup table's count of rows, and its cap.

A table holds at most MAX_ROWS rows (docs/automations.md). Counting them on
every add cost time in proportion to the table (46 ms at the cap, in
benchmarks/soak.py's hour), and two adds counting together could both pass
it. Instead each table has one LookupTable row whose count an add raises
with one conditional UPDATE (after a SELECT of that row): under
PostgreSQL's row lock a second add waits for the first and sees its count,
so the cap is exact, and the cost is the same at any size. Every path that
adds or removes rows keeps the count: the step
(automations/steps/lookup_rows.py), Processing > Reset, admin (recount),
and deleting an automation or an account (cascades). A table full by its
count has its rows counted before an add is refused (make_room). The count
row is also the table's turn (hold): upserts of one new key add it once,
and every writer takes the count row before the rows.
"""

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest

from automations.models import LookupRow, LookupTable

MAX_ROWS = 100_000


class Full(Exception):
    """The table holds MAX_ROWS rows already."""


def _count(*, owner_id: int, automation_id: int | None, table: str):
    """The table's count row, made on its first add (counting what rows it may hold already: admin can add some)."""
    rows = LookupRow.objects.filter(owner_id=owner_id, automation_id=automation_id, table=table)
    count, _ = LookupTable.objects.get_or_create(
        owner_id=owner_id, automation_id=automation_id, table=table, defaults={"rows": rows.count}
    )
    return LookupTable.objects.filter(pk=count.pk)


def make_room(*, owner_id: int, automation_id: int | None, table: str) -> None:
    """Count one more row in the table, in the caller's transaction, before it adds the row. Raises Full."""
    where = {"owner_id": owner_id, "automation_id": automation_id, "table": table}
    if _count(**where).filter(rows__lt=MAX_ROWS).update(rows=F("rows") + 1):
        return
    # Full by its count, or its count row went with a reset meanwhile: the rows themselves are counted, once, under
    # the count row's lock. This finds the truth too if rows came or went where nothing counted them (a worker of
    # a release before the counts, during a deploy). It costs a full table's adds a COUNT each, as every add did.
    count, rows = _counted(where)
    count.update(rows=rows if rows >= MAX_ROWS else rows + 1)
    if rows >= MAX_ROWS:
        raise Full(f"table {table!r} is full ({MAX_ROWS:,} rows)")


def hold(*, owner_id: int, automation_id: int | None, table: str, make: bool = True) -> None:
    """Lock the table's count row in the caller's transaction (made first when make and missing).

    An upsert that matched nothing holds it before it looks again: a second upsert of the same new values waits
    here, then finds the row the first added, where both would otherwise add one. A delete holds it before it
    takes the rows, so that every writer takes the count row before the rows and none deadlocks another.
    """
    where = {"owner_id": owner_id, "automation_id": automation_id, "table": table}
    count = _count(**where) if make else LookupTable.objects.filter(**where)
    list(count.select_for_update())


def removed(*, owner_id: int, automation_id: int | None, table: str, rows: int) -> None:
    """Count rows the caller deleted from the table, in its transaction."""
    if rows:
        LookupTable.objects.filter(owner_id=owner_id, automation_id=automation_id, table=table).update(
            rows=Greatest(F("rows") - rows, Value(0))
        )


@transaction.atomic
def recount(*, owner_id: int, automation_id: int | None, table: str) -> None:
    """Count the table's rows anew: after admin added or deleted some, which the step's own counting did not see."""
    count, rows = _counted({"owner_id": owner_id, "automation_id": automation_id, "table": table})
    count.update(rows=rows)


def _counted(where: dict):
    """The table's count row, locked (an add waits, then counts from what the caller writes), and its rows counted."""
    count = _count(**where).select_for_update()
    list(count)
    return count, LookupRow.objects.filter(**where).count()
