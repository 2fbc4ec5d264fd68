"""WSGI entry point of the web process (gunicorn config.wsgi): Django, as config/handler.py serves it."""

import os

from config import handler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = handler.application()
