"""App config of publickeys: the keys of every public URL (webhooks, web services, forms, chat, approvals)."""

from django.apps import AppConfig


class PublicKeysConfig(AppConfig):
    name = "publickeys"
    verbose_name = "public keys"
