"""App config of automations: definitions, runs and the step engine."""

from django.apps import AppConfig


class AutomationsConfig(AppConfig):
    name = "automations"
