"""Project configuration: settings, the URLconfs of each host and the Celery app."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
