"""App config of hooks: inbound webhook and web service URLs."""

from django.apps import AppConfig


class HooksConfig(AppConfig):
    name = "hooks"

    def ready(self):
        from automations import signals
        from hooks import deliveries

        signals.turned_on.connect(deliveries.on_turned_on, dispatch_uid="hooks.replay_kept")
        signals.reset.connect(deliveries.on_reset, dispatch_uid="hooks.discard_kept")
        signals.sweep.connect(deliveries.queue_pending, dispatch_uid="hooks.queue_pending")
