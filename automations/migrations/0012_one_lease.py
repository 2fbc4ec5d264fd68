"""The reset's marker names runs, not deliveries: a run up to it that fails makes no retry."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0011_automation_reset_after_delivery"),
    ]

    operations = [
        migrations.RemoveField(model_name="automation", name="reset_after_delivery"),
        migrations.AddField(
            model_name="automation",
            name="reset_after_run",
            field=models.BigIntegerField(default=0, editable=False),
        ),
    ]
