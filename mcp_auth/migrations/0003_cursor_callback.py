"""Lists Cursor's app callback, which its desktop app registers beside its https and loopback ones."""

from django.db import migrations

CURSOR = "cursor://anysphere.cursor-mcp/oauth/callback"


def add(apps, schema_editor):
    apps.get_model("mcp_auth", "AppCallback").objects.get_or_create(uri=CURSOR, defaults={"app_name": "Cursor"})


def remove(apps, schema_editor):
    apps.get_model("mcp_auth", "AppCallback").objects.filter(uri=CURSOR).delete()


class Migration(migrations.Migration):
    dependencies = [("mcp_auth", "0002_appcallback_registeredclient")]

    operations = [migrations.RunPython(add, remove)]
