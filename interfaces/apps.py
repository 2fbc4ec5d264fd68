"""App config of interfaces: forms, chat widget, approvals and the automation diagram."""

from django.apps import AppConfig


class InterfacesConfig(AppConfig):
    name = "interfaces"
