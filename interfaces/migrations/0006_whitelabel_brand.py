"""A white-label domain's name and logo, shown on its pages instead of the service's."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("interfaces", "0005_chat"),
    ]

    operations = [
        migrations.AddField(
            model_name="whitelabeldomain",
            name="logo",
            field=models.BinaryField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="whitelabeldomain",
            name="logo_content_type",
            field=models.CharField(blank=True, editable=False, max_length=20),
        ),
        migrations.AddField(
            model_name="whitelabeldomain",
            name="logo_digest",
            field=models.CharField(blank=True, editable=False, max_length=32),
        ),
        migrations.AddField(
            model_name="whitelabeldomain",
            name="name",
            field=models.CharField(
                blank=True,
                help_text="Shown on the domain's pages instead of the service's name; empty shows no name.",
                max_length=100,
            ),
        ),
    ]
