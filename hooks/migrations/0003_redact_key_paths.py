"""Deliveries' paths, runs' trigger data and step outputs, and lookup rows stored before keys were redacted get {key}.

Steps could copy {{trigger.path}} into their outputs and into lookup rows, so
every string of a run's trigger and steps and of a lookup row's data is
redacted, not only trigger.path.

Irreversible by nature: the keys are not kept anywhere in clear to put back.
"""
from django.db import migrations

from automations.keys import redact

BATCH = 1000


def _save(model, changed: list, field: str) -> None:
    model.objects.bulk_update(changed, [field], batch_size=BATCH)
    changed.clear()


def redact_delivery_paths(Delivery) -> None:
    changed = []
    for delivery in Delivery.objects.only("pk", "path").iterator(chunk_size=BATCH):
        path = redact(delivery.path)[:2048]  # {key} may be longer than a short key it replaced
        if path != delivery.path:
            delivery.path = path
            changed.append(delivery)
            if len(changed) >= BATCH:
                _save(Delivery, changed, "path")
    _save(Delivery, changed, "path")


def _redacted(value):
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {name: _redacted(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


def redact_json(model, fields: tuple[str, ...]) -> None:
    """Every string in these JSON fields of every row, redacted; a value nested too deep to walk is left as it is."""
    changed = []
    for row in model.objects.only("pk", *fields).iterator(chunk_size=BATCH):
        dirty = False
        for field in fields:
            value = getattr(row, field)
            try:
                redacted = _redacted(value)
            except RecursionError:
                continue
            if redacted != value:
                setattr(row, field, redacted)
                dirty = True
        if dirty:
            changed.append(row)
            if len(changed) >= BATCH:
                model.objects.bulk_update(changed, list(fields), batch_size=BATCH)
                changed.clear()
    if changed:
        model.objects.bulk_update(changed, list(fields), batch_size=BATCH)


def redact_paths(apps, schema_editor) -> None:
    redact_delivery_paths(apps.get_model("hooks", "Delivery"))
    redact_json(apps.get_model("automations", "Run"), ("trigger", "steps"))
    redact_json(apps.get_model("automations", "LookupRow"), ("data",))


class Migration(migrations.Migration):

    dependencies = [
        ("hooks", "0002_delivery_error"),
        ("automations", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(redact_paths, migrations.RunPython.noop, elidable=True),
    ]
