"""A retry names its first attempt (Run.retry_of); on PostgreSQL its foreign key also acts in the database (0002)."""

from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

cascades = import_module("automations.migrations.0002_database_cascades")
RETRY_OF = [("automations_run", "retry_of_id", "automations_run", "SET NULL")]


def add_action(apps, schema_editor):
    cascades._replace(schema_editor, True, RETRY_OF)


def remove_action(apps, schema_editor):
    cascades._replace(schema_editor, False, RETRY_OF)


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0012_one_lease"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="retry_of",
            field=models.ForeignKey(
                blank=True,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="retries",
                to="automations.run",
            ),
        ),
        migrations.RunPython(add_action, remove_action, elidable=False),
    ]
