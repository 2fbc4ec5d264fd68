"""Automation.uuid: the identifier of the diagram's URL; each existing automation gets its own random one."""

import uuid

from django.db import migrations, models


def give_each_its_own(apps, schema_editor):
    Automation = apps.get_model("automations", "Automation")
    for automation in Automation.objects.filter(uuid__isnull=True).only("pk").iterator():
        Automation.objects.filter(pk=automation.pk).update(uuid=uuid.uuid4())


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0006_run_answer"),
    ]

    operations = [
        # Added empty first: a default here would give every existing row the same value.
        migrations.AddField(model_name="automation", name="uuid", field=models.UUIDField(null=True, editable=False)),
        migrations.RunPython(give_each_its_own, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="automation",
            name="uuid",
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True),
        ),
    ]
