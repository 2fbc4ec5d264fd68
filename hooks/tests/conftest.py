import contextlib

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.http import HttpResponse
from django.test import Client

from config.handler import Request
from config.wsgi import application


@contextlib.contextmanager
def transaction_of_the_test_kept():
    """As Django's test client does around a request: closing "old" connections would close the test's transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


class EntryHandler:
    """Hands a test client's request to config.wsgi.application, the entry gunicorn serves, not to Django's handler."""

    def __call__(self, environ):
        started = []
        with transaction_of_the_test_kept():
            body = b"".join(application(environ, lambda status, headers, exc_info=None: started.append((status, headers))))
        status, headers = started[0]
        response = HttpResponse(body, status=int(status.split()[0]))
        del response["Content-Type"]
        for name, value in headers:
            response[name] = value
        response.wsgi_request = Request(environ)
        return response


@pytest.fixture
def entry_client():
    """A test client whose requests go through config.wsgi.application, as gunicorn's do."""
    client = Client()
    client.handler = EntryHandler()
    return client
