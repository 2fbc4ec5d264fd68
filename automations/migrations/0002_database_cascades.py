"""On PostgreSQL, the foreign keys to automations and runs also act in the database: ON DELETE CASCADE / SET NULL.

Django deletes related rows itself, from rows it read beforehand; a row
committed in between (a worker's run) made the delete fail on its foreign
key. automations.deletion orders its locks so that this cannot happen; these
actions are the second line, for every other way an automation is deleted
(its owner deleted, a queryset delete). The constraints stay DEFERRABLE
INITIALLY DEFERRED, as Django makes them. Each is replaced in one statement
as NOT VALID, then validated apart, so that webhooks are not held up while
a large table is read. Django recreates a constraint without its action when
a migration alters that field: automations/tests/test_delete_race.py checks
that every foreign key to these tables has one.
"""

from django.db import migrations

# (table, column, referenced table, action)
FOREIGN_KEYS = [
    ("automations_run", "automation_id", "automations_automation", "CASCADE"),
    ("automations_lookuprow", "automation_id", "automations_automation", "CASCADE"),
    ("hooks_delivery", "automation_id", "automations_automation", "CASCADE"),
    ("hooks_delivery", "run_id", "automations_run", "SET NULL"),
    ("hooks_delivery", "suppressed_by_id", "automations_run", "SET NULL"),
]

_NAME = """
    SELECT con.conname FROM pg_constraint con
    JOIN pg_attribute att ON att.attrelid = con.conrelid AND att.attnum = con.conkey[1]
    WHERE con.contype = 'f' AND con.conrelid = %s::regclass AND con.confrelid = %s::regclass AND att.attname = %s
"""


def _replace(schema_editor, with_actions: bool, foreign_keys=FOREIGN_KEYS) -> None:
    """Each of foreign_keys (a later migration passes its own) with its action, or without."""
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    for table, column, referenced, action in foreign_keys:
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(_NAME, [table, referenced, column])
            (name,) = cursor.fetchone()
        on_delete = f" ON DELETE {action}" if with_actions else ""
        schema_editor.execute(
            f"ALTER TABLE {quote(table)} DROP CONSTRAINT {quote(name)}, ADD CONSTRAINT {quote(name)} "
            f"FOREIGN KEY ({quote(column)}) REFERENCES {quote(referenced)} (id){on_delete} "
            f"DEFERRABLE INITIALLY DEFERRED NOT VALID"
        )
        schema_editor.execute(f"ALTER TABLE {quote(table)} VALIDATE CONSTRAINT {quote(name)}")


def add_actions(apps, schema_editor):
    _replace(schema_editor, with_actions=True)


def remove_actions(apps, schema_editor):
    _replace(schema_editor, with_actions=False)


class Migration(migrations.Migration):
    atomic = False  # each statement commits on its own: no lock is held while another table is validated

    dependencies = [
        ("automations", "0001_initial"),
        ("hooks", "0002_delivery_error"),
    ]

    operations = [
        migrations.RunPython(add_actions, remove_actions, elidable=False),
    ]
