import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.CreateModel(
            name="PublicKey",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "purpose",
                    models.CharField(
                        choices=[
                            ("webhook", "webhook"),
                            ("web_service", "web service"),
                            ("form", "form"),
                            ("one_time_form", "one-time form"),
                            ("form_session", "form session"),
                            ("chat_widget", "chat widget"),
                            ("approval_queue", "approval queue"),
                        ],
                        max_length=20,
                    ),
                ),
                ("digest", models.CharField(editable=False, max_length=64, unique=True)),
                ("sealed", models.TextField(blank=True, editable=False, help_text="Emptied when the key is retired.")),
                ("target_id", models.PositiveBigIntegerField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("retired_at", models.DateTimeField(blank=True, editable=False, null=True)),
                (
                    "target_type",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="contenttypes.contenttype",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["target_type", "target_id"], name="public_key_target")],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("retired_at__isnull", True)),
                        fields=("target_type", "target_id", "purpose"),
                        name="one_live_key_per_target_and_purpose",
                    )
                ],
            },
        ),
    ]
