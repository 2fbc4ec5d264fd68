"""A second chain of Django's middleware, built from a list other than settings.MIDDLEWARE.

Django's BaseHandler builds its chain in load_middleware(), which reads
settings.MIDDLEWARE and nothing else: there is no public way to give a
handler a list of its own. The lean paths (edge/handler.py) need one, so
the setting is swapped for the length of that call, once, as the process
starts and before any request is served.
"""

from django.conf import settings
from django.core.handlers.base import BaseHandler

WRITTEN_FOR = {"Django": "5.2.19"}


class ChainOf(BaseHandler):
    """Django's handling of a request through the middleware of `paths` (in settings.MIDDLEWARE's order)."""

    def __init__(self, paths: list[str]):
        super().__init__()
        full = settings.MIDDLEWARE
        settings.MIDDLEWARE = paths
        try:
            self.load_middleware()
        finally:
            settings.MIDDLEWARE = full
