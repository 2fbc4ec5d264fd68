"""App config of catalog: apps, their operations and the public feed."""

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
