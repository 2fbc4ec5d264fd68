"""The conversation token by postMessage, in Chromium: traded with a page of a site the widget allows, never another.

When a browser refuses the widget's frame any storage (third-party storage
blocked), embed.js keeps the frame's conversation token in the site's own
storage, asked for and handed over by postMessage (docs/interfaces.md). Here
an init script refuses the frame its storage as such a browser does. The
allowed site's page keeps the conversation across a reload; a page of a
site the widget does not allow, which frames the widget anyway (its
frame-ancestors header dropped on the way, as by a proxy or a browser that
ignores it), can neither plant its own conversation's token in the frame nor
receive the frame's token.

Against gunicorn and a real Celery worker on PostgreSQL and Redis; each page
is served by a local HTTP server of its own port (another origin).
"""

import json
import re
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from automations import services
from tests.e2e.stack import END_TO_END, Stack

pytestmark = END_TO_END

STEPS = [{"id": "answer", "kind": "chat_reply", "text": "You said: {{trigger.message}}"}]
# As a browser that blocks third-party storage treats the frame: both storages throw.
NO_STORAGE_IN_THE_FRAME = """
if (location.origin === %s) {
  for (const name of ["localStorage", "sessionStorage"]) {
    const refuse = () => { throw new DOMException("third-party storage blocked", "SecurityError"); };
    Object.defineProperty(window, name, {get: refuse});
  }
}
"""
# A page of a site the widget does not allow: it frames the widget, answers its question for a token with the one
# given in the address (or none), and records every message the frame posts to it.
ELSEWHERE = """<!doctype html><html lang="en"><head><title>Elsewhere</title></head><body><main>
<iframe title="chat" src="%s"></iframe>
<script>
window.received = [];
window.addEventListener("message", function (event) {
  window.received.push(event.data);
  if (event.data && event.data.type === "flowgate-chat:token?") {
    var planted = new URLSearchParams(location.search).get("plant");
    event.source.postMessage({type: "flowgate-chat:token", token: planted}, "*");
  }
});
</script></main></body></html>"""


@pytest.fixture
def stack(tmp_path, browser):
    running = Stack(tmp_path)
    running.start_web()
    running.start_worker()
    yield running
    running.stop()


@pytest.fixture
def site():
    """site() starts a server of an origin of its own; returns (origin, put), put(html) setting the page at /."""
    servers = []

    def start():
        pages = {"/": b""}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                body = pages.get(self.path.split("?")[0], b"")
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://localhost:{server.server_port}", lambda html: pages.update({"/": html.encode()})

    yield start
    for server in servers:
        server.shutdown()


def _token_of_a_new_conversation(widget_url: str) -> str:
    with urllib.request.urlopen(widget_url) as page:
        return re.search(r'data-token="([^"]+)"', page.read().decode()).group(1)


def _messages(stack: Stack, key: str, token: str) -> list[str]:
    request = urllib.request.Request(f"{stack.base}/webchat/{key}/messages", headers={"X-Chat-Token": token})
    with urllib.request.urlopen(request) as answer:
        return [message["text"] for message in json.loads(answer.read())["messages"]]


def test_the_token_is_traded_only_with_a_page_of_an_allowed_site(stack, site, owner, page):
    from playwright.sync_api import expect

    shop, put_shop = site()
    elsewhere, put_elsewhere = site()
    automation = services.create_automation(
        owner=owner,
        name="Helpdesk",
        definition={"trigger": {"type": "chat", "title": "Helpdesk", "allowed_origins": [shop]}, "steps": STEPS},
        enabled=True,
    )
    key = urlsplit(services.chat_widget_url(automation)).path.rsplit("/", 1)[1]
    widget_url = f"{stack.base}/webchat/{key}"
    put_shop(
        '<!doctype html><html lang="en"><head><title>Shop</title></head><body><main><h1>Shop</h1></main>'
        f'<script src="{stack.base}/webchat/embed.js?key={key}"></script></body></html>'
    )
    put_elsewhere(ELSEWHERE % widget_url)
    raw = page.raw
    raw.context.add_init_script(NO_STORAGE_IN_THE_FRAME % json.dumps(stack.base))
    sent_tokens: list[str] = []
    raw.on("request", lambda request: sent_tokens.append(request.headers.get("x-chat-token")))

    def first_poll():  # the frame has chosen its token once it polls
        return raw.expect_response(lambda response: response.url.startswith(f"{widget_url}/messages"))

    def say(frame, text: str) -> None:
        frame.get_by_label("Your message").fill(text)
        frame.get_by_label("Your message").press("Enter")

    # The allowed site: embed.js keeps the token the frame cannot, and a reload keeps the conversation.
    page.open(shop + "/", "shop")
    with first_poll():
        raw.get_by_role("button", name="Chat").click()
    frame = raw.frame_locator('iframe[title="Helpdesk"]')
    say(frame, "Where is my parcel?")
    expect(frame.get_by_text("You said: Where is my parcel?")).to_be_visible(timeout=15000)
    assert raw.evaluate(f"localStorage.getItem('flowgate-chat:{key}')")  # kept by the site's page for the frame
    raw.reload()
    raw.get_by_role("button", name="Chat").click()
    expect(frame.get_by_text("You said: Where is my parcel?")).to_be_visible()
    page.check("shop-after-a-reload")

    # Elsewhere (not allowed), its frame-ancestors dropped on the way: the token it plants is not taken up.
    def without_frame_ancestors(route):
        answer = route.fetch()
        headers = {name: value for name, value in answer.headers.items() if name != "content-security-policy"}
        route.fulfill(response=answer, headers=headers)

    raw.route(widget_url, without_frame_ancestors)
    planted = _token_of_a_new_conversation(widget_url)
    sent_tokens.clear()
    with first_poll():
        raw.goto(f"{elsewhere}/?plant={planted}")
    frame = raw.frame_locator('iframe[title="chat"]')
    say(frame, "My card ends in 4242")
    expect(frame.locator(".chat__message--visitor")).to_have_count(1, timeout=15000)
    assert _messages(stack, key, planted) == []  # the visitor's message is not in the planted conversation
    assert planted not in sent_tokens

    # A page there that answers with no token is never handed the frame's own.
    with first_poll():
        raw.goto(f"{elsewhere}/")
    frame = raw.frame_locator('iframe[title="chat"]')
    say(frame, "Hello")
    expect(frame.locator(".chat__message--visitor")).to_have_count(1, timeout=15000)
    frame.get_by_label("Your message").press("Escape")  # posted after anything the frame posted before it
    raw.wait_for_function("window.received.some(m => m && m.type === 'flowgate-chat:close')")
    received = raw.evaluate("window.received")
    assert [message for message in received if isinstance(message, dict) and message.get("token")] == []
