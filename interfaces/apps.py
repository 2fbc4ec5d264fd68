"""App config of interfaces: forms, chat widget, approvals and the automation diagram."""

from django.apps import AppConfig


class InterfacesConfig(AppConfig):
    name = "interfaces"

    def ready(self):
        from automations import services
        from interfaces import domains
        from publickeys.models import PublicKey

        # Hosted form URLs are issued on the owner's white-label domain, when it has one.
        services.URL_ORIGINS[PublicKey.Purpose.FORM] = domains.public_base_url
