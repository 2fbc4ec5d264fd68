"""On PostgreSQL the foreign keys of 0006's two tables to automations also act in the database, as those of
automations/0002_database_cascades.py do (after 0006 has made them: Django adds foreign keys at a migration's end)."""

from importlib import import_module

from django.db import migrations

cascades = import_module("automations.migrations.0002_database_cascades")
FOREIGN_KEYS = [
    ("hooks_verification", "automation_id", "automations_automation", "CASCADE"),
    ("hooks_refusal", "automation_id", "automations_automation", "CASCADE"),
]


def add_actions(apps, schema_editor):
    cascades._replace(schema_editor, True, FOREIGN_KEYS)


def remove_actions(apps, schema_editor):
    cascades._replace(schema_editor, False, FOREIGN_KEYS)


class Migration(migrations.Migration):
    dependencies = [
        ("hooks", "0006_verification"),
    ]

    operations = [
        migrations.RunPython(add_actions, remove_actions, elidable=False),
    ]
