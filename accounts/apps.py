"""App config of accounts: the people who own automations, their sign-up, sign-in and pages."""

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
