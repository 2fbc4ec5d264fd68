"""WSGI entry point of the web process (gunicorn config.wsgi): Django, as edge/handler.py serves it.

It serves BASE_URL's and MCP_URL's hosts. Webhooks are answered by the hooks
process alone (config/asgi.py), which also serves every host where one kind
of process runs; a webhook that reaches this process gets 503 (hooks/views.py).
"""

import logging
import os

from edge import handler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = handler.application()

from config.checks import SHARED_HOOKS_HOST, hooks_host_shared  # noqa: E402  (reads settings, set up above)

if hooks_host_shared():
    logging.getLogger(__name__).warning(SHARED_HOOKS_HOST)
