"""gunicorn app for the benchmarks: Flowgate as shipped, plus two baseline views.

/naive-{key} is the naive durable view, the baseline of issue 3: per request
one indexed SELECT, one INSERT committed on its own, and one Celery .delay.
/bytes-{n} answers n bytes held in memory and does nothing else: the floor
of a response as large as the feed's list. Both are served by the same
Django, middleware and gunicorn as the real routes. asgi_application is
the same for the hooks process's worker (config/asgi.py).
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import functools  # noqa: E402
import hashlib  # noqa: E402
from importlib import import_module  # noqa: E402

from django.http import HttpResponse  # noqa: E402
from django.urls import re_path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402

from config.wsgi import application  # noqa: E402,F401  (Flowgate as shipped)
from edge import hosts  # noqa: E402
from hooks import tasks  # noqa: E402
from hooks.models import Delivery  # noqa: E402
from publickeys.models import PublicKey  # noqa: E402
from publickeys.selectors import target_id_for_key  # noqa: E402


@csrf_exempt
def naive(request, key):
    automation_id = target_id_for_key(purpose=PublicKey.Purpose.WEBHOOK, key=key)
    if automation_id is None:
        return HttpResponse(status=404)
    body = request.body
    delivery = Delivery.objects.create(
        automation_id=automation_id,
        method=request.method,
        path=request.path,
        query_string="",
        content_type="",
        body=body,
        body_digest=hashlib.sha256(body).hexdigest(),
    )
    tasks.process_delivery.delay(delivery.pk)
    return HttpResponse(status=200)


@functools.cache
def _bytes(n: int) -> bytes:
    return b"x" * n


def same_size(request, n):
    return HttpResponse(_bytes(int(n)), content_type="application/json")


class _Urls:
    def __init__(self, base):
        if isinstance(base, str):
            base = import_module(base)
        self.urlpatterns = [
            re_path(r"^naive-(?P<key>[^/]+)$", naive),
            re_path(r"^bytes-(?P<n>[0-9]+)$", same_size),
            *base.urlpatterns,
        ]


_original, _built = hosts.urlconf_for, {}


def urlconf_for(roles):
    if roles not in _built:
        _built[roles] = _Urls(_original(roles))
    return _built[roles]


hosts.urlconf_for = urlconf_for


from config.asgi import serving  # noqa: E402

asgi_application = serving(application)
