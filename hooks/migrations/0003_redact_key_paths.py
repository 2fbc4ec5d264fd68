"""Deliveries' paths and runs' trigger.path stored before keys were redacted get {key} in place of the key.

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


def redact_run_paths(Run) -> None:
    changed = []
    for run in Run.objects.only("pk", "trigger").iterator(chunk_size=BATCH):
        path = run.trigger.get("path") if isinstance(run.trigger, dict) else None
        if isinstance(path, str) and redact(path) != path:
            run.trigger["path"] = redact(path)
            changed.append(run)
            if len(changed) >= BATCH:
                _save(Run, changed, "trigger")
    _save(Run, changed, "trigger")


def redact_paths(apps, schema_editor) -> None:
    redact_delivery_paths(apps.get_model("hooks", "Delivery"))
    redact_run_paths(apps.get_model("automations", "Run"))


class Migration(migrations.Migration):

    dependencies = [
        ("hooks", "0002_delivery_error"),
        ("automations", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(redact_paths, migrations.RunPython.noop, elidable=True),
    ]
