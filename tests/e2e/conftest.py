"""Fixtures of the end-to-end suites: the browser harness (tests/e2e/browser.py), and the web process alone."""

import pytest

from tests.e2e.browser import browser, page, phone_page  # noqa: F401  (fixtures)
from tests.e2e.stack import Stack


@pytest.fixture
def web(tmp_path, browser):  # noqa: F811  (the browser fixture, imported above)
    """gunicorn serving the web and hooks processes as the Procfile runs them, no worker: a suite that needs
    settings of its own defines its own web."""
    stack = Stack(tmp_path)
    stack.start_web()
    yield stack
    stack.stop()
