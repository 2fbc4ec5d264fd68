import pytest
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpResponse
from django.test import Client

from config.wsgi import application


class EntryHandler:
    """Hands a test client's request to config.wsgi.application, the entry gunicorn serves, not to Django's handler."""

    def __call__(self, environ):
        started = []
        body = b"".join(application(environ, lambda status, headers, exc_info=None: started.append((status, headers))))
        status, headers = started[0]
        response = HttpResponse(body, status=int(status.split()[0]))
        del response["Content-Type"]
        for name, value in headers:
            response[name] = value
        response.wsgi_request = WSGIRequest(environ)
        return response


@pytest.fixture
def entry_client():
    """A test client whose requests go through config.wsgi.application, as gunicorn's do."""
    client = Client()
    client.handler = EntryHandler()
    return client
