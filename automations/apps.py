"""App config of automations: definitions, runs and the step engine."""

from django.apps import AppConfig


class AutomationsConfig(AppConfig):
    name = "automations"

    def ready(self):
        from django.db.models.signals import post_delete

        from automations import signals
        from automations.models import Automation

        # However an automation's row goes (its owner deleted, a queryset delete), other apps hear "deleted".
        post_delete.connect(signals.row_deleted, sender=Automation, dispatch_uid="automations.signals.deleted")
