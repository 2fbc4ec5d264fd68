"""Lookup rows: find, add, update or delete rows of a table kept by the service.

A table is named by the step and scoped to This automation (`scope:
automation`, cleared by Processing > Reset) or shared by every automation of
the owner's account (`scope: account`). Rows are JSON objects; `match` picks
rows whose fields equal the given values.
"""

from django.db import transaction

from automations import lookup_tables
from automations.models import LookupRow
from automations.steps import StepFailed

KIND = "lookup_rows"
MAX_READ = 1000  # rows a step reads or updates at once

_FIELDS = {"type": "object", "propertyNames": {"pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"}}
SCHEMA = {
    "type": "object",
    "required": ["table", "action"],
    "properties": {
        "table": {"type": "string", "pattern": r"^[A-Za-z0-9_ -]{1,100}$"},
        "scope": {"enum": ["automation", "account"]},
        "action": {"enum": ["find", "add", "update", "upsert", "delete"]},
        "match": _FIELDS,
        "values": _FIELDS,
    },
    "allOf": [
        {"if": {"properties": {"action": {"enum": ["add", "update", "upsert"]}}}, "then": {"required": ["values"]}},
        {"if": {"properties": {"action": {"enum": ["update", "upsert", "delete"]}}}, "then": {"required": ["match"]}},
    ],
}


def _table(settings: dict, context) -> dict:
    """The table the step names, as the fields that pick its rows and its count."""
    automation = context.automation
    scoped = settings.get("scope", "automation") == "automation"
    return {
        "owner_id": automation.owner_id,
        "automation_id": automation.pk if scoped else None,
        "table": settings["table"],
    }


@transaction.atomic
def run(settings: dict, context) -> dict:
    table = _table(settings, context)
    action = settings["action"]
    rows = LookupRow.objects.filter(**table)
    for name, value in (settings.get("match") or {}).items():
        rows = rows.filter(**{f"data__{name}": value})
    if action == "find":
        found = [row.data for row in rows[:MAX_READ]]
        return {"rows": found, "count": len(found), "first": found[0] if found else None}
    if action == "delete":
        lookup_tables.hold(**table, make=False)  # the count row before the rows, as an upsert that adds takes them
        deleted, _ = rows.delete()
        lookup_tables.removed(**table, rows=deleted)
        return {"deleted": deleted}
    values = settings["values"]
    if action in ("update", "upsert"):
        matched = list(rows.select_for_update()[:MAX_READ])
        if not matched and action == "upsert":
            # Another upsert of the same new key waits here for this one's commit, then finds its row: one row.
            lookup_tables.hold(**table)
            matched = list(rows.select_for_update()[:MAX_READ])
        for row in matched:
            row.data = {**row.data, **values}
            row.save(update_fields=["data", "updated_at"])
        if matched or action == "update":
            return {"updated": len(matched), "rows": [row.data for row in matched]}
        values = {**settings["match"], **values}
    try:
        lookup_tables.make_room(**table)
    except lookup_tables.Full as full:
        raise StepFailed(str(full)) from None
    row = LookupRow.objects.create(**table, data=values)
    return {"added": 1, "row": row.data}
