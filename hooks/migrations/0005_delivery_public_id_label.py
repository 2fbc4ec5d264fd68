"""A delivery's public ID, spelled as admin spells other IDs (label only)."""

import uuid

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("hooks", "0004_one_lease"),
    ]

    operations = [
        migrations.AlterField(
            model_name="delivery",
            name="public_id",
            field=models.UUIDField(
                default=uuid.uuid4,
                editable=False,
                help_text="Sent as X-Flowgate-Delivery-Id.",
                unique=True,
                verbose_name="public ID",
            ),
        ),
    ]
