"""ASGI entry point of the hooks process (Procfile `hooks`, edge/asgi_worker.py): webhooks on an event loop.

Webhook URLs are answered by hooks/asgi.py without a thread per request.
Every other request (web services on the hooks host, and the whole site
when one process serves every host) goes to the same Django WSGI
application the web process serves, run in a pool of WEB_THREADS threads.
"""

import os

from edge import handler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

django_application = handler.application()

from a2wsgi import WSGIMiddleware  # noqa: E402

from config.env import env_int  # noqa: E402
from hooks.asgi import HooksApplication  # noqa: E402  (needs the apps loaded above)


def serving(wsgi_application) -> HooksApplication:
    """Webhooks on the event loop, every other request to wsgi_application in WEB_THREADS threads."""
    threads = env_int("WEB_THREADS", 8, minimum=1)
    return HooksApplication(WSGIMiddleware(wsgi_application, workers=threads), threads=threads)


application = serving(django_application)
