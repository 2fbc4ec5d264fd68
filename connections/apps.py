"""The connections app: owners' connected accounts on catalog apps (docs/connections.md)."""

from django.apps import AppConfig


class ConnectionsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "connections"
