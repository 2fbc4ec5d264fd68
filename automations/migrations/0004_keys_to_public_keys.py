"""Webhook and web service keys move from Automation's four columns to PublicKey rows, digests as they are.

Each automation gets a live "webhook" and a live "web_service" PublicKey
with the column's digest and sealed copy, so every URL issued before keeps
answering. The columns first lose their unique and not-null constraints, so
that migrating back can add them again empty and fill them from the
PublicKey rows (which it then deletes) before the constraints return.
"""

from django.db import migrations, models

# PublicKey purpose: (digest column, sealed column)
COLUMNS = {
    "webhook": ("hook_key_digest", "hook_key_sealed"),
    "web_service": ("webservice_key_digest", "webservice_key_sealed"),
}
BATCH = 1000


def _automation_type(apps):
    ContentType = apps.get_model("contenttypes", "ContentType")
    return ContentType.objects.get_or_create(app_label="automations", model="automation")[0]


def copy_to_public_keys(apps, schema_editor):
    Automation = apps.get_model("automations", "Automation")
    PublicKey = apps.get_model("publickeys", "PublicKey")
    target_type = _automation_type(apps)
    columns = [column for pair in COLUMNS.values() for column in pair]
    rows = []
    for automation in Automation.objects.only("pk", *columns).iterator(chunk_size=BATCH):
        for purpose, (digest, sealed) in COLUMNS.items():
            rows.append(
                PublicKey(
                    purpose=purpose,
                    digest=getattr(automation, digest),
                    sealed=getattr(automation, sealed),
                    target_type=target_type,
                    target_id=automation.pk,
                )
            )
        if len(rows) >= BATCH:
            PublicKey.objects.bulk_create(rows)
            rows.clear()
    PublicKey.objects.bulk_create(rows)


def copy_back_to_columns(apps, schema_editor):
    Automation = apps.get_model("automations", "Automation")
    PublicKey = apps.get_model("publickeys", "PublicKey")
    keys = PublicKey.objects.filter(target_type=_automation_type(apps), purpose__in=COLUMNS)
    for target_id, purpose, digest, sealed in (
        keys.filter(retired_at__isnull=True)
        .values_list("target_id", "purpose", "digest", "sealed")
        .iterator(chunk_size=BATCH)
    ):
        digest_column, sealed_column = COLUMNS[purpose]
        Automation.objects.filter(pk=target_id).update(**{digest_column: digest, sealed_column: sealed})
    keys.delete()
    if schema_editor.connection.vendor == "postgresql":
        # The updates queued checks of the deferred foreign keys, and PostgreSQL alters no table with checks
        # pending: they run now, before the columns get their constraints back.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0003_run_lifecycle"),
        ("publickeys", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterField("automation", "hook_key_digest", models.CharField(max_length=64, null=True)),
        migrations.AlterField("automation", "hook_key_sealed", models.TextField(null=True)),
        migrations.AlterField("automation", "webservice_key_digest", models.CharField(max_length=64, null=True)),
        migrations.AlterField("automation", "webservice_key_sealed", models.TextField(null=True)),
        migrations.RunPython(copy_to_public_keys, copy_back_to_columns),
        migrations.RemoveField("automation", "hook_key_digest"),
        migrations.RemoveField("automation", "hook_key_sealed"),
        migrations.RemoveField("automation", "webservice_key_digest"),
        migrations.RemoveField("automation", "webservice_key_sealed"),
    ]
