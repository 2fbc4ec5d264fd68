"""Chat conversations and their messages; on PostgreSQL their foreign keys to automations and runs act in the database.

As automations/0002_database_cascades explains: a row the database deletes by
itself (an automation's, a run's) takes its conversations with it, or leaves
a message without its run, whoever deletes it.
"""

import uuid

import django.db.models.deletion
from django.db import migrations, models

# (table, column, referenced table, action)
FOREIGN_KEYS = [
    ("interfaces_conversation", "automation_id", "automations_automation", "CASCADE"),
    ("interfaces_message", "run_id", "automations_run", "SET NULL"),
]

_NAME = """
    SELECT con.conname FROM pg_constraint con
    JOIN pg_attribute att ON att.attrelid = con.conrelid AND att.attnum = con.conkey[1]
    WHERE con.contype = 'f' AND con.conrelid = %s::regclass AND con.confrelid = %s::regclass AND att.attname = %s
"""


def _replace(schema_editor, with_actions: bool) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    # Django adds the foreign keys of the tables created above when the migration ends: add them now.
    for statement in schema_editor.deferred_sql:
        schema_editor.execute(statement)
    schema_editor.deferred_sql = []
    for table, column, referenced, action in FOREIGN_KEYS:
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(_NAME, [table, referenced, column])
            (name,) = cursor.fetchone()
        on_delete = f" ON DELETE {action}" if with_actions else ""
        schema_editor.execute(
            f"ALTER TABLE {quote(table)} DROP CONSTRAINT {quote(name)}, ADD CONSTRAINT {quote(name)} "
            f"FOREIGN KEY ({quote(column)}) REFERENCES {quote(referenced)} (id){on_delete} "
            f"DEFERRABLE INITIALLY DEFERRED"
        )


def add_actions(apps, schema_editor):
    _replace(schema_editor, with_actions=True)


def remove_actions(apps, schema_editor):
    _replace(schema_editor, with_actions=False)


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0009_run_source_chat"),
        ("interfaces", "0004_whitelabel"),
    ]

    operations = [
        migrations.CreateModel(
            name="Conversation",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("public_id", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_message_at", models.DateTimeField(auto_now=True, help_text="When the visitor last wrote.")),
                (
                    "automation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="conversations",
                        to="automations.automation",
                    ),
                ),
            ],
            options={
                "ordering": ["-last_message_at", "-pk"],
            },
        ),
        migrations.CreateModel(
            name="Message",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("role", models.CharField(choices=[("visitor", "Visitor"), ("bot", "reply")], max_length=10)),
                ("text", models.TextField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "conversation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="messages",
                        to="interfaces.conversation",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="chat_messages",
                        to="automations.run",
                    ),
                ),
            ],
            options={
                "ordering": ["pk"],
            },
        ),
        migrations.AddIndex(
            model_name="conversation",
            index=models.Index(fields=["automation", "-last_message_at"], name="chat_conversation_recent"),
        ),
        migrations.AddIndex(
            model_name="message",
            index=models.Index(fields=["conversation", "id"], name="chat_message_after"),
        ),
        migrations.RunPython(add_actions, remove_actions),
    ]
