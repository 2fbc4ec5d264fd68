"""Verified webhook URLs: what each verifies, the requests it refused, and a signed delivery's replay id."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0015_run_suppressed_wording"),
        ("hooks", "0005_delivery_public_id_label"),
    ]

    operations = [
        migrations.CreateModel(
            name="Refusal",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "reason",
                    models.CharField(
                        choices=[
                            ("signature", "signature did not match"),
                            ("malformed", "signature headers missing or malformed"),
                            ("timestamp", "timestamp outside tolerance"),
                            ("replayed", "webhook-id already seen"),
                            ("address", "address not allowed"),
                            ("unreadable", "secret unreadable: set it again"),
                        ],
                        max_length=20,
                    ),
                ),
                ("method", models.CharField(max_length=10)),
                ("path", models.CharField(help_text="Its key replaced by {key}.", max_length=2048)),
                ("client_address", models.CharField(blank=True, max_length=64)),
                ("body_size", models.PositiveBigIntegerField(default=0)),
                ("received_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["-pk"],
            },
        ),
        migrations.CreateModel(
            name="Verification",
            fields=[
                (
                    "automation",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="verification",
                        serialize=False,
                        to="automations.automation",
                    ),
                ),
                (
                    "scheme",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("", "None"),
                            ("standard", "Standard Webhooks (webhook-signature)"),
                            ("github", "GitHub (X-Hub-Signature-256)"),
                            ("stripe", "Stripe (Stripe-Signature)"),
                        ],
                        max_length=20,
                    ),
                ),
                ("tolerance_seconds", models.PositiveIntegerField(default=300)),
                ("secret_sealed", models.TextField(blank=True, editable=False)),
                ("secret_hint", models.CharField(blank=True, editable=False, max_length=40)),
                ("previous_sealed", models.TextField(blank=True, editable=False)),
                ("previous_hint", models.CharField(blank=True, editable=False, max_length=40)),
                (
                    "allowed_networks",
                    models.JSONField(blank=True, default=list, help_text="CIDR networks; empty: every address."),
                ),
                ("refused_count", models.PositiveBigIntegerField(default=0, editable=False)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
        ),
        migrations.AddField(
            model_name="delivery",
            name="replay_id",
            field=models.CharField(blank=True, editable=False, max_length=64, null=True),
        ),
        migrations.AddConstraint(
            model_name="delivery",
            constraint=models.UniqueConstraint(
                condition=models.Q(("replay_id__isnull", False)),
                fields=("automation", "replay_id"),
                name="one_delivery_per_replay_id",
            ),
        ),
        migrations.AddField(
            model_name="refusal",
            name="automation",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="refusals",
                to="automations.automation",
            ),
        ),
        migrations.AddIndex(
            model_name="refusal",
            index=models.Index(fields=["automation", "-id"], name="hooks_refus_automat_42756e_idx"),
        ),
    ]
