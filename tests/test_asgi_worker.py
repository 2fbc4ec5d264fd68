"""The hooks process's worker (config/asgi_worker.py) in-process: request targets read as the web process reads them.

Half-closed connections, and every target through a real server: hooks/tests/test_hooks_process.py.
"""

from urllib.parse import unquote_to_bytes

import pytest

from config.asgi_worker import origin_form

SCOPE = {"type": "http", "method": "POST", "headers": [], "scheme": "https", "http_version": "1.1"}


@pytest.mark.parametrize(
    ("raw_path", "query", "path", "left_query"),
    [
        (b"http://hooks.example.com/automation-k", b"n=1", "/automation-k", b"n=1"),
        (b"HTTPS://hooks.example.com", b"", "/", b""),
        (b"ftp://hooks.example.com/automation-k", b"", "/automation-k", b""),
        (b"http://[x/automation-k", b"", "http://[x/automation-k", b""),  # no authority to take off: as it came
        (b"/automation-k#top", b"", "/automation-k", b""),
        (b"/automation-k#top", b"n=1", "/automation-k", b""),  # "?n=1" was part of the fragment
        (b"/automation-k", b"n=1#top", "/automation-k", b"n=1"),
        (b"/automation-%C3%A9%23k", b"", "/automation-\u00e9#k", b""),  # an escaped # is the path's own
    ],
)
def test_a_target_in_absolute_form_or_with_a_fragment_is_read_as_its_path(raw_path, query, path, left_query):
    as_gunicorn_reads_it = unquote_to_bytes(raw_path).decode()
    read = origin_form({**SCOPE, "path": as_gunicorn_reads_it, "raw_path": raw_path, "query_string": query})
    assert (read["path"], read["query_string"]) == (path, left_query)


def test_a_target_in_origin_form_is_passed_through_as_it_came():
    scope = {**SCOPE, "path": "/automation-k", "raw_path": b"/automation-k", "query_string": b"a=1"}
    assert origin_form(scope) is scope
