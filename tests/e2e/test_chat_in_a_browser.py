"""The chat widget in headless Chromium: embed.js on a page of a second origin, a conversation, a reload, and on.

Against gunicorn, a real Celery worker and beat on PostgreSQL and Redis; the
host page is served by a second local HTTP server (another origin and
another site: localhost against the service's 127.0.0.1), with a stylesheet
that tries to hide and shrink whatever it can. Screenshots go to
tests/artifacts/ (ignored by git).
"""

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.db import connection

from automations import services
from tests.e2e.stack import ROOT, Stack

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.REDIS_URL or connection.vendor != "postgresql",
        reason="end-to-end tests run on PostgreSQL and Redis",
    ),
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian's chromium package is not installed"),
]

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
STEPS = [{"id": "answer", "kind": "chat_reply", "text": "You said: {{trigger.message}}"}]
# What a careless or hostile site stylesheet does to third-party widgets.
HOSTILE_CSS = """
* { font-size: 3px !important; color: transparent !important; }
div { opacity: 0 !important; position: static !important; }
iframe { width: 1px !important; height: 1px !important; display: none !important; }
button { display: none !important; }
"""


@pytest.fixture
def stack(tmp_path):
    running = Stack(tmp_path, RUN_SWEEP_SECONDS="1")
    # Without DEBUG, whitenoise serves the collected files (STATIC_ROOT of the settings the processes run).
    command = [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"]
    subprocess.run(command, cwd=ROOT, env=running.env, check=True)
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


@pytest.fixture
def host_page():
    """A second origin's page: serve(html) puts the page up; its URL is on localhost, the service on 127.0.0.1."""
    pages: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/favicon.ico":
                self.send_response(204)
                self.end_headers()
                return
            body = pages.get(self.path.split("?")[0], b"")
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8" if self.path != "/site.css" else "text/css")
            self.send_header("Set-Cookie", "site_session=secret-of-the-site; Path=/")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def serve(html: str) -> str:
        pages["/"] = html.encode()
        pages["/site.css"] = HOSTILE_CSS.encode()
        return f"http://localhost:{server.server_port}/"

    yield serve
    server.shutdown()


@pytest.fixture
def browser(monkeypatch):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls of the test are still synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def test_a_visitor_chats_through_embed_js_on_another_site_reloads_and_goes_on(stack, owner, host_page, browser):
    from playwright.sync_api import expect

    automation = services.create_automation(
        owner=owner,
        name="Helpdesk",
        definition={"trigger": {"type": "chat", "title": "Helpdesk", "welcome": "Hi! Ask away."}, "steps": STEPS},
        enabled=True,
    )
    key = urlsplit(services.chat_widget_url(automation)).path.rsplit("/", 1)[1]
    site = host_page(
        '<!doctype html><html lang="en"><head><title>Shop</title><link rel="stylesheet" href="/site.css"></head>'
        f'<body><h1>Shop</h1><script src="{stack.base}/webchat/embed.js?key={key}"></script></body></html>'
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    problems: list[str] = []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.goto(site)

    launcher = page.get_by_role("button", name="Chat")
    expect(launcher).to_be_visible()  # the site's CSS hides every button and div: not this one
    launcher.click()
    frame = page.frame_locator('iframe[title="Helpdesk"]')
    box = frame.get_by_label("Your message")
    expect(box).to_be_focused()
    expect(frame.get_by_text("Hi! Ask away.")).to_be_visible()
    iframe = page.locator('iframe[title="Helpdesk"]').bounding_box()
    assert iframe["width"] >= 300 and iframe["height"] >= 400  # the site's 1px rule did not reach it
    box.fill("Where is my parcel?")
    box.press("Enter")
    expect(frame.get_by_text("You said: Where is my parcel?")).to_be_visible(timeout=15000)
    page.screenshot(path=str(ARTIFACTS / "chat-widget-on-a-site.png"))
    # The frame is on the service's origin: the site's cookie is not its to read, and the site cannot read the frame.
    widget = next(f for f in page.frames if f.url.startswith(stack.base))
    assert widget.evaluate("document.cookie") == ""
    assert page.evaluate("document.cookie") == "site_session=secret-of-the-site"
    assert page.evaluate("document.querySelector('iframe') === null")  # inside a shadow root the page's query misses

    page.reload()
    page.get_by_role("button", name="Chat").click()
    frame = page.frame_locator('iframe[title="Helpdesk"]')
    expect(frame.get_by_text("You said: Where is my parcel?")).to_be_visible()  # the conversation was kept
    box = frame.get_by_label("Your message")
    box.fill("Thanks!")
    box.press("Enter")
    expect(frame.get_by_text("You said: Thanks!")).to_be_visible(timeout=15000)
    expect(frame.locator(".chat__message")).to_have_count(5)  # the welcome, then two messages and two replies
    page.screenshot(path=str(ARTIFACTS / "chat-widget-after-reload.png"))

    box.press("Escape")  # closes the frame and gives focus back to the launcher
    expect(page.locator('iframe[title="Helpdesk"]')).to_be_hidden()
    expect(page.get_by_role("button", name="Chat")).to_be_focused()
    assert problems == []


def test_the_widget_page_passes_an_accessibility_check_on_a_phone(stack, owner, browser):
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import expect

    automation = services.create_automation(
        owner=owner,
        name="Helpdesk",
        definition={"trigger": {"type": "chat", "title": "Helpdesk", "welcome": "Hi!"}, "steps": STEPS},
        enabled=True,
    )
    page = browser.new_page(viewport={"width": 360, "height": 640})
    page.goto(stack.base + urlsplit(services.chat_widget_url(automation)).path)
    box = page.get_by_label("Your message")
    box.fill("Hello")
    box.press("Enter")
    expect(page.get_by_text("You said: Hello")).to_be_visible(timeout=15000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360  # nothing wider than the phone
    page.screenshot(path=str(ARTIFACTS / "chat-widget-phone.png"))
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
