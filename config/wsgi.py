"""WSGI entry point of the web process (gunicorn config.wsgi): Django, as config/handler.py serves it.

It serves BASE_URL's and MCP_URL's hosts. Webhooks are answered by the hooks
process alone (config/asgi.py), which also serves every host where one kind
of process runs; a webhook that reaches this process gets 421 (hooks/views.py).
"""

import logging
import os

from config import handler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = handler.application()

from config.hosts import role_hosts  # noqa: E402  (reads settings, set up above)

if any("hooks" in roles and len(roles) > 1 for roles in role_hosts().values()):
    logging.getLogger(__name__).warning(
        "HOOKS_URL names the same host as BASE_URL or MCP_URL: this WSGI process answers its webhooks 421. "
        "Serve that host with the hooks process (gunicorn config.asgi, as the README's production section shows), "
        "or give HOOKS_URL a host of its own."
    )
