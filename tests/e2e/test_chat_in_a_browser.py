"""The chat widget in headless Chromium: embed.js on a page of a second origin, a conversation, a reload, and on.

Against gunicorn, a real Celery worker and beat on PostgreSQL and Redis; the
host page is served by a second local HTTP server (another origin and
another site: localhost against the service's 127.0.0.1), with a stylesheet
that tries to hide and shrink whatever it can. The harness
(tests/e2e/browser.py) screenshots each checked page to tests/artifacts/ and
checks it for accessibility, CSP violations and script errors.
"""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from automations import services
from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END, Stack

pytestmark = END_TO_END

STEPS = [{"id": "answer", "kind": "chat_reply", "text": "You said: {{trigger.message}}"}]
# What a careless or hostile site stylesheet does to third-party widgets.
HOSTILE_CSS = """
* { font-size: 3px !important; }
div { opacity: 0 !important; position: static !important; }
iframe { width: 1px !important; height: 1px !important; display: none !important; }
button { display: none !important; }
"""


@pytest.fixture
def stack(tmp_path):
    running = Stack(tmp_path, RUN_SWEEP_SECONDS="1")
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


def test_a_visitor_chats_through_embed_js_on_another_site_reloads_and_goes_on(stack, owner, host_page, page):
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
        f'<body><main><h1>Shop</h1></main><script src="{stack.base}/webchat/embed.js?key={key}"></script></body></html>'
    )
    browser_page = page.raw
    errors: list[str] = []
    browser_page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.open(site, "site-with-the-launcher")

    launcher = browser_page.get_by_role("button", name="Chat")
    expect(launcher).to_be_visible()  # the site's CSS hides every button and div: not this one
    launcher.click()
    frame = browser_page.frame_locator('iframe[title="Helpdesk"]')
    box = frame.get_by_label("Your message")
    expect(box).to_be_focused()
    expect(frame.get_by_text("Hi! Ask away.")).to_be_visible()
    iframe = browser_page.locator('iframe[title="Helpdesk"]').bounding_box()
    assert iframe["width"] >= 300 and iframe["height"] >= 400  # the site's 1px rule did not reach it
    box.fill("Where is my parcel?")
    box.press("Enter")
    expect(frame.get_by_text("You said: Where is my parcel?")).to_be_visible(timeout=15000)
    page.check("a-reply-in-the-widget")
    # The frame is on the service's origin: the site's cookie is not its to read, and the site cannot read the frame.
    widget = next(f for f in browser_page.frames if f.url.startswith(stack.base))
    assert widget.evaluate("document.cookie") == ""
    assert browser_page.evaluate("document.cookie") == "site_session=secret-of-the-site"
    assert browser_page.evaluate("document.querySelector('iframe') === null")  # in a shadow root: the query misses

    browser_page.reload()
    browser_page.get_by_role("button", name="Chat").click()
    frame = browser_page.frame_locator('iframe[title="Helpdesk"]')
    expect(frame.get_by_text("You said: Where is my parcel?")).to_be_visible()  # the conversation was kept
    box = frame.get_by_label("Your message")
    box.fill("Thanks!")
    box.press("Enter")
    expect(frame.get_by_text("You said: Thanks!")).to_be_visible(timeout=15000)
    expect(frame.locator(".chat__message")).to_have_count(5)  # the welcome, then two messages and two replies
    page.check("after-a-reload-and-another-message")

    box.press("Escape")  # closes the frame and gives focus back to the launcher
    expect(browser_page.locator('iframe[title="Helpdesk"]')).to_be_hidden()
    expect(browser_page.get_by_role("button", name="Chat")).to_be_focused()
    assert errors == []


def test_the_widget_page_on_a_phone(stack, owner, phone_page):
    from playwright.sync_api import expect

    automation = services.create_automation(
        owner=owner,
        name="Helpdesk",
        definition={"trigger": {"type": "chat", "title": "Helpdesk", "welcome": "Hi!"}, "steps": STEPS},
        enabled=True,
    )
    phone_page.open(stack.base + urlsplit(services.chat_widget_url(automation)).path, "widget-page")
    box = phone_page.raw.get_by_label("Your message")
    box.fill("Hello")
    box.press("Enter")
    expect(phone_page.raw.get_by_text("You said: Hello")).to_be_visible(timeout=15000)
    phone_page.check("a-reply")
    assert_fits_the_screen(phone_page)


def test_a_paused_chats_button_says_it_is_unavailable_and_its_frame_shows_the_notice(stack, owner, host_page, page):
    from playwright.sync_api import expect

    automation = services.create_automation(
        owner=owner,
        name="Helpdesk",
        definition={"trigger": {"type": "chat", "title": "Helpdesk"}, "steps": STEPS},
        enabled=False,
    )
    key = urlsplit(services.chat_widget_url(automation)).path.rsplit("/", 1)[1]
    site = host_page(
        '<!doctype html><html lang="en"><head><title>Shop</title></head>'
        f'<body><main><h1>Shop</h1></main><script src="{stack.base}/webchat/embed.js?key={key}"></script></body></html>'
    )
    page.open(site, "site-with-a-paused-chat")
    launcher = page.raw.get_by_role("button", name="Chat unavailable")
    expect(launcher).to_be_visible()
    launcher.click()
    frame = page.raw.frame_locator('iframe[title="Helpdesk"]')
    expect(frame.get_by_role("heading", name="This chat is not available right now")).to_be_visible()
    page.check("the-paused-chat-opened")
