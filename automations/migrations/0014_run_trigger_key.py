"""A run names the key its trigger's URL carried (Run.trigger_key); on PostgreSQL its foreign key also acts in the
database (0002), so that a key deleted with its automation never fails on a run a worker committed meanwhile."""

from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

cascades = import_module("automations.migrations.0002_database_cascades")
TRIGGER_KEY = [("automations_run", "trigger_key_id", "publickeys_publickey", "SET NULL")]


def add_action(apps, schema_editor):
    cascades._replace(schema_editor, True, TRIGGER_KEY)


def remove_action(apps, schema_editor):
    cascades._replace(schema_editor, False, TRIGGER_KEY)


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0013_run_retry_of"),
        ("publickeys", "0002_key_expiry"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="trigger_key",
            field=models.ForeignKey(
                blank=True,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="publickeys.publickey",
            ),
        ),
        migrations.RunPython(add_action, remove_action, elidable=False),
    ]
