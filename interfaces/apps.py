"""App config of interfaces: forms, chat widget, approvals and the automation diagram."""

from django.apps import AppConfig


class InterfacesConfig(AppConfig):
    name = "interfaces"

    def ready(self):
        # automations does not import interfaces (STYLE.md 9): what its steps and services need of the pages, and
        # what the pages do when an automation changes, goes through its signals.
        from automations import signals
        from interfaces import receivers

        signals.place_approval_item.connect(receivers.place_approval_item, dispatch_uid="interfaces.approvals.queues")
        signals.chat_reply.connect(receivers.chat_reply, dispatch_uid="interfaces.chat.conversations")
        signals.url_origin.connect(receivers.url_origin, dispatch_uid="interfaces.whitelabel.domains")
        signals.public_urls.connect(receivers.public_urls, dispatch_uid="interfaces.public_urls")
        signals.deleted.connect(receivers.delete_files, dispatch_uid="interfaces.forms.uploads")
        for signal in signals.LIFECYCLE:
            signal.connect(receivers.forget_forms, dispatch_uid="interfaces.forget_forms")
