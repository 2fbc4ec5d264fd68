"""WSGI entry point for gunicorn: webhook URLs first (hooks/wsgi.py), then Django."""
import os

from config import handler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

django_application = handler.application()

from hooks.wsgi import WebhookEntry  # noqa: E402  (needs the apps loaded above)

application = WebhookEntry(django_application)
