"""App config of hooks: inbound webhook and web service URLs."""
from django.apps import AppConfig


class HooksConfig(AppConfig):
    name = "hooks"
