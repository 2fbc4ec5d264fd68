"""Execution History's Suppressed column: its label, and help that holds for a run of any status (state only)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0014_run_trigger_key"),
    ]

    operations = [
        migrations.AlterField(
            model_name="run",
            name="suppressed_count",
            field=models.PositiveIntegerField(
                default=0,
                help_text=(
                    "Duplicate deliveries that started no run because they repeated this one. "
                    "Only a run that succeeded or was stopped by a condition suppresses duplicates."
                ),
                verbose_name="suppressed",
            ),
        ),
    ]
