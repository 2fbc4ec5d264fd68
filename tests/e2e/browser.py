"""Browser tests: Debian's Chromium driven by playwright, a screenshot and an accessibility check of every page seen.

The `browser` fixture launches /usr/bin/chromium (never a browser that
playwright would download). Where it or playwright is missing, browser tests
are skipped, unless FLOWGATE_REQUIRE_BROWSER=1 (.ci/run sets it) or CI is
set: there a missing browser fails the run instead of hiding the tests.

The `page` fixture gives a BrowserPage: `page.open(url)` goes to a page and
checks it; after a click that changes the page, `page.check("label")` does
the same. Each check

- saves a full-page screenshot to tests/artifacts/<test>/<n>-<label>.png
  (ignored by git) for a person to look at,
- runs axe-core (bundled by the axe-playwright-python package) in the page
  and fails on any serious or critical violation,
- fails on any Content-Security-Policy violation or script error the page
  reported since the last check.

The playwright page itself is `page.raw`. Starting the browser also runs
collectstatic, so gunicorn (whitenoise) serves the current stylesheet.
"""

import fcntl
import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("FLOWGATE_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
# As root, in a machine without outside network: no sandbox, no background calls home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
FAILING_IMPACTS = {"serious", "critical"}
# axe-core's CSSOM preload rebuilds a stylesheet that @imports another (admin's forms.css) as <style> elements in
# the page, which the page's own policy refuses (and it fetches the import from the wrong URL): a violation that is
# axe's, not the page's. Without it the one rule needing it (css-orientation-lock) is left unchecked.
AXE_OPTIONS = {"resultTypes": ["violations"], "preload": {"assets": ["media"]}}
PHONE = {"width": 360, "height": 740}


def browser_required() -> bool:
    return os.environ.get("FLOWGATE_REQUIRE_BROWSER") == "1" or bool(os.environ.get("CI"))


def _unavailable(reason: str):
    if browser_required():
        pytest.fail(f"browser tests cannot run: {reason} (FLOWGATE_REQUIRE_BROWSER or CI is set)")
    pytest.skip(f"browser tests skipped: {reason}")


@pytest.fixture(scope="module")
def browser():
    """Chromium for the tests of one module.

    Per module, not per session: playwright's sync API keeps an event loop
    running in this thread while it is open, which would break the asyncio
    tests of other modules.
    """
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install '.[dev]')")
    collect_static()
    # With that loop running, Django refuses the tests' own ORM calls, synchronous all the same: allowed while it runs.
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            yield launched
            launched.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@functools.cache
def collect_static() -> None:
    """Copy static/ to STATIC_ROOT, which whitenoise serves in gunicorn: pages are checked with their stylesheet."""
    root = Path(__file__).resolve().parents[2]
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1"}
    (root / "var").mkdir(exist_ok=True)
    # One test process at a time (make test runs several): a copy in progress would hide a file from a server
    # another process is starting.
    with open(root / "var" / "collectstatic.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
            cwd=root,
            env=environment,
            check=True,
        )


class BrowserPage:
    def __init__(self, raw, folder: Path):
        from axe_playwright_python.sync_playwright import Axe

        self.raw = raw
        self.folder = folder
        self.shots = 0
        self.problems: list[str] = []
        self._axe = Axe()
        raw.on("console", self._console)
        raw.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))
        raw.on("response", self._response)

    def _console(self, message) -> None:
        if message.type == "error" and (
            "Content Security Policy" in message.text or "Content-Security-Policy" in message.text
        ):
            self.problems.append(f"CSP violation: {message.text}")

    def _response(self, response) -> None:
        # What a page loads by itself (a stylesheet, a script, its icon) must be there. The page may be a 404, and
        # what its script fetches may be refused on purpose (a chat message over its limit).
        if response.status >= 400 and response.request.resource_type not in ("document", "fetch", "xhr"):
            self.problems.append(f"{response.status} for {response.request.resource_type} {response.url}")

    def open(self, url: str, label: str | None = None, *, accessibility: bool = True):
        """Go to url, wait for it to load, and check it; returns playwright's response."""
        response = self.raw.goto(url, wait_until="load")
        self.check(label or _label(url), accessibility=accessibility)
        return response

    def check(self, label: str, *, accessibility: bool = True) -> None:
        """Screenshot, accessibility check and CSP check of the page as it is now.

        accessibility=False leaves axe out, for a page whose markup is not the
        service's (a widget of Django's admin); the CSP and script checks stay.
        """
        self.raw.wait_for_load_state("load")
        self.shots += 1
        self.folder.mkdir(parents=True, exist_ok=True)
        self.raw.screenshot(path=str(self.folder / f"{self.shots:02d}-{_label(label)}.png"), full_page=True)
        problems, self.problems = self.problems, []
        results = self._axe.run(self.raw, options=AXE_OPTIONS).response if accessibility else {}
        for violation in results.get("violations", []):
            if violation.get("impact") in FAILING_IMPACTS:
                targets = [node.get("target") for node in violation.get("nodes", [])][:5]
                problems.append(
                    f"accessibility ({violation['impact']}): {violation['id']}: {violation['help']} {targets}"
                )
        assert not problems, f"{self.raw.url} ({label}):\n" + "\n".join(problems)


def _label(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:80] or "page"


def _folder(request) -> Path:
    folder = ARTIFACTS / _label(request.node.nodeid.split("::", 1)[-1])
    shutil.rmtree(folder, ignore_errors=True)
    return folder


@pytest.fixture
def page(browser, request):
    """A page in a fresh browser context (no cookies) at a desktop size."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield BrowserPage(context.new_page(), _folder(request))
    context.close()


@pytest.fixture
def phone_page(browser, request):
    """A page at a phone's width (360 CSS pixels), touch on."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    yield BrowserPage(context.new_page(), _folder(request) / "phone")
    context.close()


def assert_fits_the_screen(page: BrowserPage) -> None:
    """Nothing on the page is wider than its viewport (no sideways scrolling on a phone)."""
    overflow = page.raw.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{page.raw.url} is {overflow}px wider than the screen"
