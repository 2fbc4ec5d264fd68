"""Fixtures of the end-to-end suites: the browser harness (tests/e2e/browser.py)."""

from tests.e2e.browser import browser, page, phone_page  # noqa: F401  (fixtures)
