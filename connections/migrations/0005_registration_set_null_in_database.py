"""On PostgreSQL the registration's foreign key to automations acts in the database too (automations 0002).

Apart from 0004: Django adds a new table's foreign keys at the end of the migration that creates it.
"""

from importlib import import_module

from django.db import migrations

cascades = import_module("automations.migrations.0002_database_cascades")
# On PostgreSQL the foreign key to automations acts in the database too (automations 0002): an automation deleted
# by any way leaves its registration, for the cleanup to remove from the other app.
AUTOMATION = [("connections_registration", "automation_id", "automations_automation", "SET NULL")]


def add_action(apps, schema_editor):
    cascades._replace(schema_editor, True, AUTOMATION)


def remove_action(apps, schema_editor):
    cascades._replace(schema_editor, False, AUTOMATION)


class Migration(migrations.Migration):
    dependencies = [("connections", "0004_registration")]

    operations = [migrations.RunPython(add_action, remove_action, elidable=False)]
