"""App config of interfaces: forms, chat widget, approvals and the automation diagram."""

from django.apps import AppConfig


class InterfacesConfig(AppConfig):
    name = "interfaces"

    def ready(self):
        # automations does not import interfaces (STYLE.md 9): its approval step is handed the queue here.
        from automations.steps import approval
        from interfaces import approvals

        approval.served_by(approvals.place_item)

        from automations import services
        from interfaces import domains
        from publickeys.models import PublicKey

        # Hosted form URLs are issued on the owner's white-label domain, when it has one.
        services.URL_ORIGINS[PublicKey.Purpose.FORM] = domains.public_base_url
