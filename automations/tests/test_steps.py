"""Step kinds, run through the engine against real parts (a local HTTP server, the database)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from automations import engine, runs
from automations.models import LookupRow, Run
from automations.steps.condition import holds

pytestmark = pytest.mark.django_db


def run_steps(make_automation, steps, trigger=None, **options):
    automation = make_automation(steps, **options)
    run = runs.start(automation=automation, trigger=trigger or {"body": {}}, source=Run.Source.WEBHOOK)
    response = engine.advance(run)
    run.save()
    return run, response


@pytest.fixture
def other_app():
    """A local HTTP server standing in for another app; records what it receives."""
    received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received.append({"path": self.path, "body": body, "headers": dict(self.headers)})
            status = 500 if self.path.startswith("/broken") else 200
            payload = json.dumps({"id": 42, "echo": json.loads(body or b"null")}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", received
    server.shutdown()


@pytest.mark.parametrize(
    ("left", "op", "right", "expected"),
    [
        ("paid", "equals", "paid", True),
        ("3", "equals", 3, True),
        ("a", "not_equals", "b", True),
        ("hello world", "contains", "world", True),
        (["a", "b"], "contains", "b", True),
        ({"k": 1}, "contains", "k", True),
        (None, "exists", None, False),
        ("", "exists", None, False),
        (0, "exists", None, True),
        (None, "not_exists", None, True),
        ("10", "greater_than", 9, True),
        (2, "less_than", "x", False),
        (True, "equals", 1, True),
    ],
)
def test_condition_tests(left, op, right, expected):
    assert holds({"left": left, "op": op, "right": right}) is expected


def test_a_false_condition_stops_the_run_without_failing_it(make_automation):
    run, _ = run_steps(
        make_automation,
        [
            {
                "id": "c",
                "kind": "condition",
                "all": [{"left": "{{trigger.body.status}}", "op": "equals", "right": "paid"}],
            },
            {"id": "after", "kind": "set_values", "values": {"a": 1}},
        ],
        trigger={"body": {"status": "open"}},
    )
    assert run.status == Run.Status.STOPPED
    assert [step["id"] for step in run.steps] == ["c"]


def test_condition_any(make_automation):
    run, _ = run_steps(
        make_automation,
        [
            {
                "id": "c",
                "kind": "condition",
                "any": [{"left": "{{trigger.body.a}}", "op": "exists"}, {"left": "{{trigger.body.b}}", "op": "exists"}],
            }
        ],
        trigger={"body": {"b": 1}},
    )
    assert run.status == Run.Status.SUCCEEDED


def test_http_request_sends_json_and_later_steps_read_its_response(make_automation, other_app, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    base, received = other_app
    run, response = run_steps(
        make_automation,
        [
            {
                "id": "call",
                "kind": "http_request",
                "method": "POST",
                "url": base + "/things",
                "headers": {"X-Token": "t"},
                "query": {"q": "{{trigger.body.q}}"},
                "json": {"name": "{{trigger.body.name}}"},
            },
            {
                "id": "answer",
                "kind": "respond",
                "body": {"created": "{{steps.call.body.id}}", "status": "{{steps.call.status}}"},
            },
        ],
        trigger={"body": {"name": "Ada", "q": 7}},
    )
    assert run.status == Run.Status.SUCCEEDED
    assert received[0]["path"] == "/things?q=7"
    assert json.loads(received[0]["body"]) == {"name": "Ada"}
    assert received[0]["headers"]["X-Token"] == "t"
    assert response["body"] == {"created": 42, "status": 200}


def test_http_request_fails_the_run_on_an_error_status_but_keeps_the_output(make_automation, other_app, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    base, _ = other_app
    run, _ = run_steps(
        make_automation, [{"id": "call", "kind": "http_request", "method": "POST", "url": base + "/broken", "json": {}}]
    )
    assert run.status == Run.Status.FAILED
    assert run.steps[0]["output"]["status"] == 500
    assert "answered 500" in run.error
    run, _ = run_steps(
        make_automation,
        [
            {
                "id": "call",
                "kind": "http_request",
                "method": "POST",
                "url": base + "/broken",
                "json": {},
                "fail_on_error_status": False,
            }
        ],
    )
    assert run.status == Run.Status.SUCCEEDED


def test_http_request_refuses_internal_addresses_by_default(make_automation, other_app):
    base, received = other_app
    for url in (
        base + "/things",
        "http://localhost:9/",
        "http://10.0.0.1/",
        "http://[::1]/",
        "http://169.254.169.254/latest",
    ):
        run, _ = run_steps(make_automation, [{"id": "call", "kind": "http_request", "method": "POST", "url": url}])
        assert run.status == Run.Status.FAILED, url
        assert "internal address" in run.error
    assert received == []


def test_http_request_times_out(make_automation, settings):
    import socket

    settings.HTTP_STEP_ALLOW_PRIVATE = True
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts connections, never answers
    try:
        run, _ = run_steps(
            make_automation,
            [
                {
                    "id": "call",
                    "kind": "http_request",
                    "url": f"http://127.0.0.1:{silent.getsockname()[1]}/",
                    "timeout_seconds": 0.3,
                }
            ],
        )
    finally:
        silent.close()
    assert run.status == Run.Status.FAILED
    assert "Timeout" in run.error


def test_lookup_rows_add_find_update_upsert_delete(make_automation):
    steps = [
        {
            "id": "add",
            "kind": "lookup_rows",
            "table": "customers",
            "action": "add",
            "values": {"email": "a@x", "plan": "free"},
        },
        {
            "id": "up",
            "kind": "lookup_rows",
            "table": "customers",
            "action": "update",
            "match": {"email": "a@x"},
            "values": {"plan": "pro"},
        },
        {
            "id": "ups",
            "kind": "lookup_rows",
            "table": "customers",
            "action": "upsert",
            "match": {"email": "b@x"},
            "values": {"plan": "free"},
        },
        {"id": "find", "kind": "lookup_rows", "table": "customers", "action": "find", "match": {"plan": "pro"}},
        {"id": "del", "kind": "lookup_rows", "table": "customers", "action": "delete", "match": {"email": "b@x"}},
    ]
    run, _ = run_steps(make_automation, steps)
    assert run.status == Run.Status.SUCCEEDED, run.error
    outputs = {step["id"]: step["output"] for step in run.steps}
    assert outputs["up"]["updated"] == 1
    assert outputs["ups"] == {"added": 1, "row": {"email": "b@x", "plan": "free"}}
    assert outputs["find"]["first"] == {"email": "a@x", "plan": "pro"} and outputs["find"]["count"] == 1
    assert outputs["del"] == {"deleted": 1}
    assert [row.data for row in LookupRow.objects.all()] == [{"email": "a@x", "plan": "pro"}]


def test_lookup_rows_scopes_this_automation_and_the_account(make_automation, owner, another_account):
    first = make_automation(
        [
            {"id": "a", "kind": "lookup_rows", "table": "t", "action": "add", "values": {"v": 1}},
            {"id": "b", "kind": "lookup_rows", "table": "t", "scope": "account", "action": "add", "values": {"v": 2}},
        ]
    )
    run = runs.start(automation=first, trigger={}, source=Run.Source.WEBHOOK)
    engine.advance(run)
    finder = [
        {"id": "mine", "kind": "lookup_rows", "table": "t", "action": "find"},
        {"id": "shared", "kind": "lookup_rows", "table": "t", "scope": "account", "action": "find"},
    ]
    run, _ = run_steps(make_automation, finder, name="second")
    outputs = {step["id"]: step["output"] for step in run.steps}
    assert outputs["mine"]["rows"] == []  # another automation's own rows are not visible
    assert outputs["shared"]["rows"] == [{"v": 2}]
    run, _ = run_steps(make_automation, finder, user=another_account)
    assert {step["id"]: step["output"]["rows"] for step in run.steps} == {"mine": [], "shared": []}


def test_a_step_that_raises_fails_the_run_with_an_internal_error(make_automation, monkeypatch):
    from automations.steps import set_values

    monkeypatch.setattr(set_values, "run", lambda settings, context: 1 / 0)
    run, _ = run_steps(make_automation, [{"id": "v", "kind": "set_values", "values": {"a": 1}}])
    assert (run.status, run.error) == (Run.Status.FAILED, "step v: internal error")


def test_adding_a_step_kind_is_adding_a_module():
    import pkgutil

    import automations.steps as package
    from automations.definition import schema

    modules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert set(schema()["properties"]["steps"]["items"]["properties"]["kind"]["enum"]) == modules


def test_chat_reply_needs_its_text():
    from automations.definition import errors

    document = {"trigger": {"type": "chat"}, "steps": [{"id": "say", "kind": "chat_reply"}]}
    assert errors(document) == ["$.steps[0]: 'text' is a required property"]


def test_chat_reply_fails_a_run_that_no_chat_message_started(make_automation):
    run, _ = run_steps(make_automation, [{"id": "say", "kind": "chat_reply", "text": "hello"}])
    assert (run.status, run.error) == (
        Run.Status.FAILED,
        "step say: chat_reply answers only runs started by a chat message",
    )


def test_chat_reply_writes_its_filled_text_through_the_signal_the_pages_answer(make_automation, monkeypatch):
    from interfaces.chat import conversations

    said = []
    monkeypatch.setattr(conversations, "reply", lambda **reply: said.append(reply) or {"id": 1, **reply})
    trigger = {"message": "hi", "history": [], "conversation_id": "c1", "order": {"n": 7}}
    steps = [
        {"id": "say", "kind": "chat_reply", "text": "  You said {{trigger.message}}  "},
        {"id": "raw", "kind": "chat_reply", "text": "{{trigger.order}}"},
        {"id": "empty", "kind": "chat_reply", "text": "{{trigger.missing}}"},
    ]
    run, _ = run_steps(make_automation, steps, trigger=trigger)
    assert said == [
        {"conversation_id": "c1", "text": "You said hi"},
        {"conversation_id": "c1", "text": '{"n": 7}'},
    ]
    assert run.error == "step empty: the reply is empty once its {{ paths }} are filled"
