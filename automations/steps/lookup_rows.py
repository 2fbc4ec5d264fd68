"""Lookup rows: find, add, update or delete rows of a table kept by the service.

A table is named by the step and scoped to This automation (`scope:
automation`, cleared by Processing > Reset) or shared by every automation of
the owner's account (`scope: account`). Rows are JSON objects; `match` picks
rows whose fields equal the given values.
"""

from django.db import transaction

from automations.models import LookupRow
from automations.steps import StepFailed

KIND = "lookup_rows"
MAX_ROWS = 1000

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


def _rows(settings: dict, context):
    automation = context.automation
    scope = automation if settings.get("scope", "automation") == "automation" else None
    rows = LookupRow.objects.filter(owner_id=automation.owner_id, table=settings["table"], automation=scope)
    for name, value in (settings.get("match") or {}).items():
        rows = rows.filter(**{f"data__{name}": value})
    return rows, scope


@transaction.atomic
def run(settings: dict, context) -> dict:
    rows, scope = _rows(settings, context)
    action = settings["action"]
    if action == "find":
        found = [row.data for row in rows[:MAX_ROWS]]
        return {"rows": found, "count": len(found), "first": found[0] if found else None}
    if action == "delete":
        deleted, _ = rows.delete()
        return {"deleted": deleted}
    values = settings["values"]
    if action in ("update", "upsert"):
        matched = list(rows.select_for_update()[:MAX_ROWS])
        for row in matched:
            row.data = {**row.data, **values}
            row.save(update_fields=["data", "updated_at"])
        if matched or action == "update":
            return {"updated": len(matched), "rows": [row.data for row in matched]}
        values = {**settings["match"], **values}
    automation = context.automation
    if (
        LookupRow.objects.filter(owner_id=automation.owner_id, table=settings["table"], automation=scope).count()
        >= 100_000
    ):
        raise StepFailed(f"table {settings['table']!r} is full (100,000 rows)")
    row = LookupRow.objects.create(owner_id=automation.owner_id, automation=scope, table=settings["table"], data=values)
    return {"added": 1, "row": row.data}
