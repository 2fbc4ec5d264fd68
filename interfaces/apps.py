"""App config of interfaces: forms, chat widget, approvals and the automation diagram."""

from django.apps import AppConfig


class InterfacesConfig(AppConfig):
    name = "interfaces"

    def ready(self):
        # automations does not import interfaces (STYLE.md 9): what its steps and services need of the pages is
        # handed to them here.
        from automations import lifecycle, services
        from automations.steps import approval, chat_reply
        from interfaces import approvals, chat, domains, selectors, uploads
        from publickeys.models import PublicKey

        approval.served_by(approvals.place_item)
        chat_reply.answer_with(chat.reply)
        # Hosted form and chat widget URLs are issued on the owner's white-label domain, when it has one.
        services.URL_ORIGINS[PublicKey.Purpose.FORM] = domains.public_base_url
        services.URL_ORIGINS[PublicKey.Purpose.CHAT_WIDGET] = domains.public_base_url
        # A deleted automation's form files leave the storage with it.
        lifecycle.listen("deleted", uploads.delete_files_of)
        # Hosted forms remembered by this process are read again after any change of an automation.
        for event in lifecycle.EVENTS:
            lifecycle.listen(event, selectors.forget_form_automations)
