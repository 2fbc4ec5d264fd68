"""Deliveries are no longer claimed or leased: a worker turns each into its run, and only the run is leased."""

import django.db.models.deletion
from django.db import migrations, models


def leases_to_runs(apps, schema_editor):
    """A delivery a worker held goes back to pending, to become a run of its own again; the run that worker left
    (running under the delivery's claim, with no lease of its own) is abandoned, as a lost worker's run was."""
    Delivery = apps.get_model("hooks", "Delivery")
    Run = apps.get_model("automations", "Run")
    held = Delivery.objects.filter(status="running")
    Run.objects.filter(pk__in=held.exclude(run=None).values("run"), status="running").update(
        status="abandoned", error="its worker was lost; the delivery ran again", claim=None
    )
    held.update(status="pending", run=None)


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0012_one_lease"),
        ("hooks", "0003_redact_key_paths"),
    ]

    operations = [
        migrations.RunPython(leases_to_runs, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name="delivery",
            name="attempts",
        ),
        migrations.RemoveField(
            model_name="delivery",
            name="claim",
        ),
        migrations.RemoveField(
            model_name="delivery",
            name="lease_until",
        ),
        migrations.RemoveField(
            model_name="delivery",
            name="not_before",
        ),
        migrations.AlterField(
            model_name="delivery",
            name="error",
            field=models.TextField(blank=True, db_default="", help_text="Why no run could be started, when none was."),
        ),
        migrations.AlterField(
            model_name="delivery",
            name="run",
            field=models.ForeignKey(
                blank=True,
                help_text="The run it became: its first attempt (a retry is a run of its own, with the next attempt).",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="automations.run",
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
                ],
                default="pending",
                max_length=20,
            ),
        ),
    ]
