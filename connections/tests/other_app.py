"""Birch Forms, an app whose webhook trigger registers itself (REST hooks), on a local server: tests of registrations.

POST /hooks with {"target_url": ...} answers 201 {"id": "hook-N"} and keeps it; DELETE /hooks/{id} answers 204.
`refuse` makes it refuse a registration (422 with its own message); `fail_deletes` makes each deletion answer 500
(with Retry-After: 0, so the runtime's own retries take no time); `echo` puts the webhook URL in those messages.
Every request it gets is in `requests`, and `deleted` is set at each deletion it accepts (what an end-to-end test
waits on).
"""

import json
import threading
from contextlib import contextmanager
from types import SimpleNamespace

from conftest import app_doc
from tests.local_apps import QuietHandler, serving

KEY = "sk-birch-7777-registering"
REFUSAL = "target_url must be reachable from the internet"


def birch_handler(state: SimpleNamespace) -> type:
    class Birch(QuietHandler):
        def _answer(self, status: int, body=None, headers=()):
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            state.requests.append(("POST", self.path, body, self.headers.get("Authorization")))
            if self.headers.get("Authorization") != f"Bearer {KEY}":
                return self._answer(401, {"message": "Invalid API key."})
            if state.refuse:
                said = f"{REFUSAL}: {body.get('target_url')}" if state.echo else REFUSAL
                return self._answer(422, {"message": said})
            if self.path.endswith("-without-id"):
                return self._answer(200, {"ok": True})
            state.count += 1
            hook_id = f"hook-{state.count}"
            state.hooks[hook_id] = body.get("target_url")
            self._answer(201, {"id": hook_id, "target_url": body.get("target_url")})

        def do_DELETE(self):
            state.requests.append(("DELETE", self.path, None, self.headers.get("Authorization")))
            hook_id = self.path.rsplit("/", 1)[-1]
            if state.fail_deletes:
                said = (
                    f"the hook store is down ({state.hooks.get(hook_id)})" if state.echo else "the hook store is down"
                )
                return self._answer(500, {"message": said}, [("Retry-After", "0")])
            if state.hooks.pop(hook_id, None) is None:
                return self._answer(404, {"message": "no such hook"})
            self._answer(204)
            state.deleted.set()

    return Birch


@contextmanager
def birch_api():
    """The app's state and base URL while it serves."""
    state = SimpleNamespace(
        requests=[], hooks={}, count=0, refuse=False, fail_deletes=False, echo=False, deleted=threading.Event()
    )
    with serving(birch_handler(state)) as base:
        state.base = base
        yield state


def birch_doc(base: str, **trigger) -> dict:
    """Birch Forms in an import document: an api_key app with a self-registering and a manual trigger."""
    registering = {
        "key": "new_response",
        "name": "New Response",
        "description": "When a form gets a response.",
        "endpoint": f"{base}/hooks",
        "http_method": "POST",
        "request_template": {"target_url": "{{input.webhook_url}}", "event": "response.created"},
        "delivery_mode": "self_registering",
        **trigger,
    }
    manual = {
        "key": "new_signup",
        "name": "New Signup",
        "description": "When someone signs up.",
        "delivery_mode": "manual",
        "instructions": "In Birch Forms, open Settings > Webhooks, choose Add webhook and paste the URL.",
    }
    return app_doc(
        "birch-forms", name="Birch Forms", auth_type="api_key", auth_config={}, triggers=[registering, manual]
    )


def connect(owner, make_catalog, base: str):
    """The owner's connection to Birch Forms, the app imported with its API at base."""
    from catalog.models import App
    from connections import services

    make_catalog(birch_doc(base))
    return services.connect(owner=owner, app=App.objects.get(slug="birch-forms"), label="Forms", credential=KEY)


def definition(connection_id: int, trigger: str = "new_response") -> dict:
    """An automation on one of Birch Forms' triggers, with no steps."""
    settings = {"type": "app_trigger", "app": "birch-forms", "trigger": trigger, "connection": connection_id}
    return {"trigger": settings, "steps": []}
