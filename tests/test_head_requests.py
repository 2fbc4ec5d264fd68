"""A HEAD request reaches the server with no body from Django: gunicorn would drop it and log a warning each time."""

import pytest
from django.test import RequestFactory

from edge import handler


def _call(application, request) -> tuple[str, dict, bytes]:
    started = {}

    def start_response(status, headers, exc_info=None):
        started.update(status=status, headers=dict(headers))

    chunks = application(request.environ, start_response)
    try:
        body = b"".join(chunks)
    finally:
        getattr(chunks, "close", lambda: None)()
    return started["status"], started["headers"], body


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/no-such-page", "/healthz"])
def test_a_head_answer_has_the_get_headers_and_no_body(path):
    application = handler.application()
    get_status, get_headers, get_body = _call(application, RequestFactory().get(path))
    head_status, head_headers, head_body = _call(application, RequestFactory().head(path))
    assert get_body
    assert head_body == b""
    assert head_status == get_status
    assert head_headers.get("Content-Length") == get_headers.get("Content-Length")
