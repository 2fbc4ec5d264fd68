"""App config of interfaces: forms, chat widget, approvals and the automation diagram."""

from django.apps import AppConfig


class InterfacesConfig(AppConfig):
    name = "interfaces"

    def ready(self) -> None:
        from automations.steps import chat_reply
        from interfaces import chat

        chat_reply.answer_with(chat.reply)
