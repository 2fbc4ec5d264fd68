"""App config of hooks: inbound webhook and web service URLs."""

from django.apps import AppConfig


class HooksConfig(AppConfig):
    name = "hooks"

    def ready(self):
        from automations import lifecycle, signals
        from hooks import deliveries

        lifecycle.listen("turned_on", deliveries.on_turned_on)
        lifecycle.listen("reset", deliveries.on_reset)
        signals.sweep.connect(deliveries.queue_pending, dispatch_uid="hooks.queue_pending")
