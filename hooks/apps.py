"""App config of hooks: inbound webhook and web service URLs."""

from django.apps import AppConfig


class HooksConfig(AppConfig):
    name = "hooks"

    def ready(self):
        from automations import lifecycle
        from hooks import services

        lifecycle.listen("turned_on", services.on_turned_on)
        lifecycle.listen("reset", services.on_reset)
