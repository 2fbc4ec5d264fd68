"""App config of interfaces: forms, chat widget, approvals and the automation diagram."""

from django.apps import AppConfig


class InterfacesConfig(AppConfig):
    name = "interfaces"

    def ready(self):
        # automations does not import interfaces (STYLE.md 9): its approval step is handed the queue here.
        from automations.steps import approval
        from interfaces import approvals

        approval.served_by(approvals.place_item)
