"""Deliveries of a connection (its per-connection URL) or of an app (its shared endpoint), beside an automation's.

On PostgreSQL each change is made without reading or rewriting the table
while webhooks wait: the automation column only drops its NOT NULL (Django
would drop and re-add its foreign key, losing the ON DELETE CASCADE of
automations/migrations/0002 and validating it under a lock that holds up
every webhook); the new columns are nullable or have a constant default (no
rewrite); their foreign keys are added NOT VALID and validated apart (that
lock lets inserts through); their partial indexes are built CONCURRENTLY. A
generic webhook's row is in neither index. Elsewhere (SQLite) Django's own
operations do it.
"""

import django.db.models.deletion
from django.db import migrations, models

FORWARDS = [
    'ALTER TABLE "hooks_delivery" ALTER COLUMN "automation_id" DROP NOT NULL',
    'ALTER TABLE "hooks_delivery" ADD COLUMN "account" varchar(255) DEFAULT \'\' NOT NULL, '
    'ADD COLUMN "app_id" bigint NULL, ADD COLUMN "connection_id" bigint NULL',
    'ALTER TABLE "hooks_delivery" ADD CONSTRAINT "hooks_delivery_app_id_fk_catalog_app_id" FOREIGN KEY ("app_id") '
    'REFERENCES "catalog_app" ("id") DEFERRABLE INITIALLY DEFERRED NOT VALID',
    'ALTER TABLE "hooks_delivery" VALIDATE CONSTRAINT "hooks_delivery_app_id_fk_catalog_app_id"',
    'ALTER TABLE "hooks_delivery" ADD CONSTRAINT "hooks_delivery_connection_id_fk_connections_connection_id" '
    'FOREIGN KEY ("connection_id") REFERENCES "connections_connection" ("id") DEFERRABLE INITIALLY DEFERRED NOT VALID',
    'ALTER TABLE "hooks_delivery" VALIDATE CONSTRAINT "hooks_delivery_connection_id_fk_connections_connection_id"',
    'CREATE INDEX CONCURRENTLY IF NOT EXISTS "delivery_connection" ON "hooks_delivery" ("connection_id") '
    'WHERE "connection_id" IS NOT NULL',
    'CREATE INDEX CONCURRENTLY IF NOT EXISTS "delivery_app" ON "hooks_delivery" ("app_id") WHERE "app_id" IS NOT NULL',
]
# Back: rows that belong to no automation cannot stay in a NOT NULL column.
BACKWARDS = [
    'DROP INDEX CONCURRENTLY IF EXISTS "delivery_app"',
    'DROP INDEX CONCURRENTLY IF EXISTS "delivery_connection"',
    'ALTER TABLE "hooks_delivery" DROP COLUMN "connection_id", DROP COLUMN "app_id", DROP COLUMN "account"',
    'DELETE FROM "hooks_delivery" WHERE "automation_id" IS NULL',
    'ALTER TABLE "hooks_delivery" ALTER COLUMN "automation_id" SET NOT NULL',
]


class PostgreSQLOrDjango(migrations.operations.base.Operation):
    """Django's operations for the state (and on SQLite), this SQL on PostgreSQL."""

    reduces_to_sql = False
    reversible = True

    def __init__(self, operations, forwards, backwards):
        self.operations, self.forwards, self.backwards = operations, forwards, backwards

    def deconstruct(self):
        return self.__class__.__name__, [self.operations, self.forwards, self.backwards], {}

    def state_forwards(self, app_label, state):
        for operation in self.operations:
            operation.state_forwards(app_label, state)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            for sql in self.forwards:
                schema_editor.execute(sql)
            return
        state = from_state
        for operation in self.operations:
            after = state.clone()
            operation.state_forwards(app_label, after)
            operation.database_forwards(app_label, schema_editor, state, after)
            state = after

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            for sql in self.backwards:
                schema_editor.execute(sql)
            return
        states = [to_state]
        for operation in self.operations:
            after = states[-1].clone()
            operation.state_forwards(app_label, after)
            states.append(after)
        for operation, before, after in reversed(list(zip(self.operations, states, states[1:], strict=False))):
            operation.database_backwards(app_label, schema_editor, after, before)

    def describe(self):
        return "Deliveries of a connection or of an app"


class Migration(migrations.Migration):
    atomic = False  # each statement commits on its own; CREATE INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("automations", "0016_run_source_labels_translated"),
        ("catalog", "0001_initial"),
        ("connections", "0002_connection_account_id_connection_connection_account"),
        ("hooks", "0007_verification_cascades"),
    ]

    operations = [
        PostgreSQLOrDjango(
            [
                migrations.AddField(
                    model_name="delivery",
                    name="account",
                    field=models.CharField(
                        blank=True,
                        db_default="",
                        help_text=(
                            "At a shared endpoint: the account its routing header named "
                            "(a body path is read by the worker)."
                        ),
                        max_length=255,
                    ),
                ),
                migrations.AddField(
                    model_name="delivery",
                    name="app",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        help_text="The app whose shared endpoint received it.",
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="deliveries",
                        to="catalog.app",
                    ),
                ),
                migrations.AddField(
                    model_name="delivery",
                    name="connection",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        help_text=(
                            "The connection it came for (its URL, or the shared endpoint's routing), "
                            "or was fanned out from."
                        ),
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="deliveries",
                        to="connections.connection",
                    ),
                ),
                migrations.AlterField(
                    model_name="delivery",
                    name="automation",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="deliveries",
                        to="automations.automation",
                    ),
                ),
                migrations.AlterField(
                    model_name="delivery",
                    name="status",
                    field=models.CharField(
                        choices=[
                            ("pending", "pending (queued, or kept while off)"),
                            ("done", "done (its run is in Execution History)"),
                            ("failed", "failed (its run could not be started)"),
                            ("suppressed", "suppressed duplicate"),
                            ("unmatched", "unmatched (no connection or automation takes it: see its error)"),
                        ],
                        default="pending",
                        max_length=20,
                    ),
                ),
                migrations.AddIndex(
                    model_name="delivery",
                    index=models.Index(
                        condition=models.Q(("connection__isnull", False)),
                        fields=["connection"],
                        name="delivery_connection",
                    ),
                ),
                migrations.AddIndex(
                    model_name="delivery",
                    index=models.Index(condition=models.Q(("app__isnull", False)), fields=["app"], name="delivery_app"),
                ),
            ],
            FORWARDS,
            BACKWARDS,
        ),
    ]
