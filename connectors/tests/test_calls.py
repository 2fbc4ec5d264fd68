"""An app's operation as an HTTP call (connectors/calls.py), against a local server playing the app."""

import json
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectors import calls
from connectors.calls import CallFailed, Operation
from tests.local_apps import QuietHandler, serving

SECRET = "sk_live_never_shown_4242"


class App:
    """A scripted app: each request takes the next answer (status, headers, body); every request is recorded."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.seen: list[dict] = []
        self.lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        app = self

        class Handler(QuietHandler):
            def answer(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length) if length else b""
                with app.lock:
                    app.seen.append(
                        {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
                    )
                    status, headers, content = app.answers.pop(0) if len(app.answers) > 1 else app.answers[0]
                data = content if isinstance(content, bytes) else json.dumps(content).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = answer

        return Handler


@pytest.fixture
def private_allowed(settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True  # the app is on loopback here


def operation(base: str, path: str = "/contacts", method: str = "POST", **fields) -> Operation:
    return Operation(app_name="Acme CRM", method=method, endpoint=base + path, auth_type="api_key", **fields)


def test_an_action_sends_its_rendered_template_with_the_credential_as_a_bearer_token(private_allowed):
    app = App((201, {}, {"id": 7}))
    with serving(app.handler()) as base:
        template = {"email": "{{input.email}}", "tags": ["{{input.tag}}"], "source": "flowgate"}
        answer = calls.perform(
            operation(base, template=template), credential=SECRET, data={"email": "ada@x", "tag": "vip"}, seconds=5
        )
    assert (answer["status"], answer["body"]) == (201, {"id": 7})
    sent = app.seen[0]
    assert sent["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert json.loads(sent["body"]) == {"email": "ada@x", "tags": ["vip"], "source": "flowgate"}


def test_a_get_sends_its_template_as_the_query_and_a_value_never_adds_a_path_segment(private_allowed):
    app = App((200, {}, []))
    config = {"credential": {"query": {"key": "{{api_key}}"}}}
    with serving(app.handler()) as base:
        acme = operation(base, "/contacts/{{input.id}}", "GET", template={"q": "{{input.q}}"}, auth_config=config)
        calls.perform(acme, credential=SECRET, data={"id": "a/b?c=1#d", "q": "x y"}, seconds=5)
    parts = urlsplit(app.seen[0]["path"])
    assert parts.path == "/contacts/a%2Fb%3Fc%3D1%23d"
    assert parse_qs(parts.query) == {"q": ["x y"], "key": [SECRET]}
    assert "Authorization" not in app.seen[0]["headers"]


def test_a_header_named_by_the_app_takes_the_credential_in_its_format(private_allowed):
    app = App((200, {}, {}))
    config = {"credential": {"headers": {"X-Api-Key": "Token {{api_key}}"}}}
    with serving(app.handler()) as base:
        calls.perform(operation(base, auth_config=config), credential=SECRET, data={}, seconds=5)
    assert app.seen[0]["headers"]["X-Api-Key"] == f"Token {SECRET}"


def test_an_app_without_auth_gets_no_credential(private_allowed):
    app = App((200, {}, {}))
    with serving(app.handler()) as base:
        acme = Operation(app_name="Open", method="POST", endpoint=base + "/x", auth_type="none")
        calls.perform(acme, credential=SECRET, data={}, seconds=5)
    assert "Authorization" not in app.seen[0]["headers"]


# Failure paths.


def test_a_429_is_asked_again_after_the_wait_the_app_asks_for(private_allowed):
    app = App((429, {"Retry-After": "0"}, {"message": "slow down"}), (200, {}, {"ok": True}))
    with serving(app.handler()) as base:
        answer = calls.perform(operation(base), credential=SECRET, data={}, seconds=5)
    assert answer["body"] == {"ok": True} and len(app.seen) == 2


def test_an_app_that_stays_unavailable_fails_with_its_name_status_and_message_after_three_tries(
    private_allowed, monkeypatch
):
    monkeypatch.setattr(calls, "FIRST_BACKOFF_SECONDS", 0.01)
    app = App((503, {}, {"error": {"message": "maintenance until 10:00"}}))
    with serving(app.handler()) as base, pytest.raises(CallFailed) as failed:
        calls.perform(operation(base), credential=SECRET, data={}, seconds=5)
    assert str(failed.value) == "Acme CRM answered 503: maintenance until 10:00"
    assert failed.value.output["status"] == 503 and len(app.seen) == calls.MAX_ATTEMPTS


def test_a_post_answered_500_is_not_sent_again_since_the_app_may_have_acted(private_allowed):
    app = App((500, {}, {"errors": [{"message": "duplicate contact"}]}))
    with serving(app.handler()) as base, pytest.raises(CallFailed, match="answered 500: duplicate contact"):
        calls.perform(operation(base), credential=SECRET, data={}, seconds=5)
    assert len(app.seen) == 1


def test_a_get_answered_500_is_asked_again(private_allowed, monkeypatch):
    monkeypatch.setattr(calls, "FIRST_BACKOFF_SECONDS", 0.01)
    app = App((500, {}, b"oops"), (200, {}, {"found": 1}))
    with serving(app.handler()) as base:
        answer = calls.perform(operation(base, method="GET"), credential=SECRET, data={}, seconds=5)
    assert answer["body"] == {"found": 1} and len(app.seen) == 2


def test_a_wait_longer_than_the_time_left_fails_at_once_and_says_so(private_allowed):
    app = App((429, {"Retry-After": "120"}, {"message": "quota"}))
    with serving(app.handler()) as base, pytest.raises(CallFailed) as failed:
        calls.perform(operation(base), credential=SECRET, data={}, seconds=5)
    assert str(failed.value) == "Acme CRM answered 429: quota (it asked to wait 120 s, longer than the step has left)"
    assert len(app.seen) == 1


def test_a_client_error_fails_at_once_with_the_apps_words_and_never_the_credential(private_allowed):
    app = App((401, {}, {"error_description": f"invalid key {SECRET[:3]}…\x00\u202e"}))
    config = {"credential": {"query": {"key": "{{api_key}}"}}}
    with serving(app.handler()) as base, pytest.raises(CallFailed) as failed:
        calls.perform(operation(base, method="GET", auth_config=config), credential=SECRET, data={}, seconds=5)
    message = str(failed.value)
    assert message.startswith("Acme CRM answered 401: invalid key sk_")
    assert SECRET not in message and "\x00" not in message and "\u202e" not in message
    assert len(app.seen) == 1


def test_an_app_on_an_internal_address_is_refused_unless_allowed(settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = False
    app = App((200, {}, {}))
    with serving(app.handler()) as base, pytest.raises(CallFailed) as failed:
        calls.perform(operation(base), credential=SECRET, data={}, seconds=5)
    assert str(failed.value).startswith("Acme CRM: ") and "HTTP_STEP_ALLOW_PRIVATE" in str(failed.value)
    assert app.seen == []


def test_an_app_that_answers_too_late_fails_within_the_time_given(private_allowed):
    from tests.local_apps import slow_handler

    with serving(slow_handler(30)) as base, pytest.raises(CallFailed, match="no complete answer within"):
        calls.perform(operation(base), credential=SECRET, data={}, seconds=0.5)


@pytest.mark.parametrize(
    "endpoint", ["ftp://acme.example/x", "https:///x", "https://acme.example:99999/x", "/relative"]
)
def test_an_endpoint_that_is_no_http_url_fails_before_any_call(endpoint):
    acme = Operation(app_name="Acme CRM", method="POST", endpoint=endpoint)
    with pytest.raises(CallFailed, match="^Acme CRM: the operation's endpoint"):
        calls.perform(acme, credential=None, data={}, seconds=1)


@given(st.one_of(st.none(), st.text(max_size=60)), st.integers(min_value=1, max_value=3))
def test_any_retry_after_gives_a_wait_of_at_most_a_day(retry_after, attempt):
    assert 0 <= calls._wait(retry_after, attempt) <= 86_400


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=20,
    )
)
def test_any_answer_body_gives_a_short_printable_message(body):
    said = calls._message_of(body)
    assert len(said) <= calls.MESSAGE_CHARS + 1 and said.isprintable()


def test_an_app_that_echoes_the_credential_in_its_error_never_has_it_repeated(private_allowed):
    app = App((403, {}, {"message": f"key {SECRET} is not allowed here"}))
    with serving(app.handler()) as base, pytest.raises(CallFailed) as failed:
        calls.perform(operation(base), credential=SECRET, data={}, seconds=5)
    assert str(failed.value) == "Acme CRM answered 403: key … is not allowed here"
    assert SECRET not in json.dumps(failed.value.output)  # nor in what the run keeps of the answer
