"""The chat widget's messages endpoint: conversation tokens, runs and replies, limits, hostile input."""

import io
import json

import pytest
from django.core import signing
from django.db import connection
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from automations import runs, services
from automations.models import Run
from interfaces.chat import tokens
from interfaces.models import Conversation, Message

pytestmark = pytest.mark.django_db


@pytest.fixture
def chat(client, make_chat, open_widget):
    """A visitor with an open widget: send(text) and poll(after) as its page's script does."""

    class Visitor:
        def __init__(self, key: str, token: str):
            self.key, self.token = key, token

        def send(self, text, **extra):
            return self.post(json.dumps({"text": text}), **extra)

        def post(self, body, content_type="application/json", token=None):
            return client.post(
                f"/webchat/{self.key}/messages",
                body,
                content_type=content_type,
                headers={"X-Chat-Token": token or self.token},
            )

        def poll(self, after=0, token=None):
            return client.get(
                f"/webchat/{self.key}/messages", {"after": after}, headers={"X-Chat-Token": token or self.token}
            )

        def texts(self):
            return [(m["role"], m["text"]) for m in self.poll().json()["messages"]]

    def open_(*, key=None, **trigger):
        if key is None:
            automation, key = make_chat(**trigger)
        return Visitor(key, open_widget(key))

    return open_


def start_queued_runs():
    """What the worker does with each run a message queued."""
    for run_id in Run.objects.filter(status=Run.Status.WAITING).values_list("pk", flat=True):
        runs.resume(run_id)


def test_a_new_conversation_has_no_messages_and_writes_nothing(chat):
    visitor = chat()
    poll = visitor.poll()
    assert (poll.status_code, poll.json()) == (200, {"messages": []})
    assert poll["Cache-Control"] == "no-store"
    assert not Conversation.objects.exists()


def test_a_message_starts_a_run_with_the_message_the_history_and_the_conversation(chat):
    visitor = chat()
    first = visitor.send("Hello")
    assert first.status_code == 201
    assert first.json()["message"]["text"] == "Hello" and first.json()["message"]["role"] == "visitor"
    start_queued_runs()
    visitor.send("Where is my order?")
    conversation = Conversation.objects.get()
    run = Run.objects.filter(status=Run.Status.WAITING).get()
    assert run.source == Run.Source.CHAT
    assert run.trigger["message"] == "Where is my order?"
    assert run.trigger["conversation_id"] == str(conversation.public_id)
    assert [(m["role"], m["text"]) for m in run.trigger["history"]] == [
        ("visitor", "Hello"),
        ("bot", "You said: Hello"),
    ]
    assert Message.objects.get(text="Where is my order?").run == run


def test_the_automations_chat_reply_answers_in_the_same_conversation(chat):
    visitor = chat()
    visitor.send("Hi")
    start_queued_runs()
    assert visitor.texts() == [("visitor", "Hi"), ("bot", "You said: Hi")]
    run = Run.objects.get()
    assert run.status == Run.Status.SUCCEEDED
    assert run.steps[0]["output"]["text"] == "You said: Hi"


def test_a_poll_returns_only_the_messages_after_the_last_one_it_has(chat):
    visitor = chat()
    sent = visitor.send("Hi").json()["message"]
    start_queued_runs()
    later = visitor.poll(after=sent["id"]).json()["messages"]
    assert [m["text"] for m in later] == ["You said: Hi"]
    assert visitor.poll(after=later[-1]["id"]).json() == {"messages": []}


def test_a_reload_keeps_the_conversation_with_the_token_the_page_kept(chat, open_widget):
    visitor = chat()
    visitor.send("Hi")
    open_widget(visitor.key)  # the reload issues a new token, which the page's script sets aside for its kept one
    assert visitor.texts() == [("visitor", "Hi")]
    visitor.send("Still there?")
    assert Conversation.objects.count() == 1


def test_each_visitor_sees_only_their_own_conversation(chat):
    ada = chat()
    bob = chat(key=ada.key)
    ada.send("I am Ada")
    bob.send("I am Bob")
    assert ada.texts() == [("visitor", "I am Ada")]
    assert bob.texts() == [("visitor", "I am Bob")]
    assert Conversation.objects.count() == 2


def test_a_token_of_another_widget_is_refused(chat):
    ada = chat()
    other = chat()
    ada.send("Hi")
    for answer in (other.poll(token=ada.token), other.post(json.dumps({"text": "x"}), token=ada.token)):
        assert answer.status_code == 403
        assert answer.json() == {"error": "this conversation token is not valid for this chat"}
    assert Message.objects.count() == 1


@pytest.mark.parametrize(
    "token",
    [
        None,
        "",
        "not-a-token",
        "x" * 5000,
        "é" * 10,
        # Named: a signed token holds the second it was made, and test processes must collect the same names.
        pytest.param(signing.dumps({"a": 1, "c": "0" * 32}, salt="another.salt"), id="another-salt"),
        pytest.param(
            signing.dumps(
                {"a": 1, "c": "0" * 32}, salt="interfaces.chat.conversations.conversation", key="forged-secret"
            ),
            id="forged-secret",
        ),
    ],
)
def test_missing_forged_and_malformed_tokens_are_refused(chat, client, token):
    visitor = chat()
    headers = {} if token is None else {"X-Chat-Token": token}
    assert client.get(f"/webchat/{visitor.key}/messages", headers=headers).status_code == 403
    sent = client.post(
        f"/webchat/{visitor.key}/messages", {"text": "x"}, content_type="application/json", headers=headers
    )
    assert sent.status_code == 403
    assert not Message.objects.exists()


def test_an_altered_token_is_refused(chat):
    visitor = chat()
    value, _, signature = visitor.token.rpartition(":")
    claims = signing.loads(visitor.token, salt="interfaces.chat.conversations.conversation")
    other_conversation = signing.b64_encode(json.dumps({**claims, "c": "f" * 32}).encode()).decode()
    forged = other_conversation + visitor.token[len(value.split(":")[0]) :]
    assert visitor.poll(token=forged).status_code == 403
    assert visitor.poll(token=visitor.token[:-1] + ("A" if visitor.token[-1] != "A" else "B")).status_code == 403


def test_an_expired_token_is_refused(chat, settings):
    visitor = chat()
    settings.CHAT_TOKEN_MAX_AGE_SECONDS = -1  # every token is older than that
    assert visitor.poll().status_code == 403


def test_a_token_names_its_conversation_and_widget(make_chat):
    automation, _ = make_chat()
    token = tokens.issue(automation_id=automation.pk)
    assert tokens.read(token, automation_id=automation.pk).automation_id == automation.pk
    with pytest.raises(tokens.BadToken):
        tokens.read(token, automation_id=automation.pk + 1)


def test_a_widget_that_is_off_takes_no_message_but_its_open_pages_still_get_replies(chat, make_chat):
    visitor = chat()
    visitor.send("Hi")
    automation = Conversation.objects.get().automation
    services.turn_off(automation=automation)
    refused = visitor.send("Anyone?")
    assert (refused.status_code, refused.json()) == (503, {"error": "this chat is not available right now"})
    start_queued_runs()  # the run of the message taken before goes on
    assert visitor.texts() == [("visitor", "Hi"), ("bot", "You said: Hi")]


def test_a_deleted_widgets_messages_answer_404_and_its_conversations_are_gone(chat):
    visitor = chat()
    visitor.send("Hi")
    services.delete_automation(automation=Conversation.objects.get().automation)
    assert visitor.poll().status_code == 404
    assert visitor.send("Hi").status_code == 404
    assert not Conversation.objects.exists() and not Message.objects.exists()


def test_a_reply_to_a_conversation_deleted_meanwhile_fails_its_step(chat):
    visitor = chat()
    visitor.send("Hi")
    Conversation.objects.all().delete()
    start_queued_runs()
    run = Run.objects.get()
    assert (run.status, run.error) == (Run.Status.FAILED, "step answer: the conversation no longer exists")


@pytest.mark.parametrize(
    ("limit", "rate"),
    [("per_conversation", "CHAT_RATE_CONVERSATION"), ("per_widget", "CHAT_RATE_WIDGET"), ("per_ip", "CHAT_RATE_IP")],
)
def test_messages_past_a_limit_get_429_with_retry_after(chat, settings, limit, rate):
    setattr(settings, rate, "2/m")
    ada = chat()
    # The per-conversation limit is one visitor's; the other two count every conversation (of the widget, of the IP).
    second = ada if limit == "per_conversation" else chat(key=ada.key)
    assert ada.send("one").status_code == 201
    assert second.send("two").status_code == 201
    refused = second.send("three")
    assert refused.status_code == 429
    assert refused.json() == {"error": "too many messages; try again later"}
    assert 0 < int(refused["Retry-After"]) <= 60
    assert Message.objects.count() == 2
    if limit == "per_conversation":
        assert chat(key=ada.key).send("a new visitor").status_code == 201


def test_a_widgets_own_limits_replace_the_defaults(chat):
    visitor = chat(limits={"per_conversation": "1/h"})
    assert visitor.send("one").status_code == 201
    assert visitor.send("two").status_code == 429


def test_polls_are_not_limited(chat, settings):
    settings.CHAT_RATE_IP = "1/m"
    visitor = chat()
    assert all(visitor.poll().status_code == 200 for _ in range(5))


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('{"text": "a\\u0000b"}', "text: Null characters are not allowed."),
        ('{"text": "\\ud800"}', "text: Surrogate characters are not allowed: U+D800."),
        ('{"text": "bell\\u0007"}', "text: control characters are not allowed"),
        ('{"text": "a\\u007fb"}', "text: control characters are not allowed"),
        ('{"text": "a\\u0085b"}', "text: control characters are not allowed"),
        ('{"text": "a\\u009b31mb"}', "text: control characters are not allowed"),
        ('{"text": "   "}', "text: This field may not be blank."),
        ('{"text": 5}', "text: Not a valid string."),
        ('{"text": ["a"]}', "text: Not a valid string."),
        ("{}", "text: This field is required."),
        ("[]", "Invalid data. Expected a dictionary, but got list."),
        ('"text"', "Invalid data. Expected a dictionary, but got str."),
        ("{", "the body is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        ('{"text": NaN}', "the body is not JSON: NaN is not a JSON number"),  # one parser of bodies, a strict one
        ("", "text: This field is required."),
        (b'{"text": "\xff"}', "the body is not JSON in UTF-8"),
        ("[" * 5000 + "]" * 5000, "the body is not JSON: JSON nested too deep"),
    ],
)
def test_hostile_input_gets_400_with_a_reason_and_starts_nothing(chat, body, error):
    answer = chat().post(body)
    assert (answer.status_code, answer.json()) == (400, {"error": error})
    assert not Message.objects.exists() and not Run.objects.exists()


def test_a_message_longer_than_the_limit_is_refused(chat, settings):
    settings.CHAT_MESSAGE_MAX_CHARS = 10
    visitor = chat()
    assert visitor.send("x" * 10).status_code == 201
    too_long = visitor.send("x" * 11)
    assert (too_long.status_code, too_long.json()) == (
        400,
        {"error": "text: Ensure this field has no more than 10 characters."},
    )


def test_a_body_over_the_limit_gets_413_unread(chat, settings):
    settings.CHAT_MAX_BODY_BYTES = 1000
    answer = chat().send("x" * 2000)
    assert (answer.status_code, answer.json()) == (413, {"error": "the body is too large"})


class Untouched(io.BytesIO):
    def read(self, *args):
        raise AssertionError("a body declared too large was read")

    readline = read


def test_a_body_declared_over_the_limit_gets_413_before_a_byte_is_read(client, chat, settings):
    settings.CHAT_MAX_BODY_BYTES = 1000
    visitor = chat()
    answer = client.post(
        f"/webchat/{visitor.key}/messages",
        content_type="application/json",
        headers={"X-Chat-Token": visitor.token},
        CONTENT_LENGTH="99999999",
        **{"wsgi.input": Untouched()},
    )
    assert (answer.status_code, answer.json()) == (413, {"error": "the body is too large"})


def test_a_body_that_is_not_json_gets_415(chat):
    answer = chat().post("text=hi", content_type="application/x-www-form-urlencoded")
    assert answer.status_code == 415 and "error" in answer.json()


def test_text_in_any_script_and_emoji_goes_through_as_sent(chat):
    visitor = chat()
    text = "Grüße, 你好, مرحبا 👋🏽\nsecond line\ttab"
    assert visitor.send(text).status_code == 201
    assert visitor.texts() == [("visitor", text)]


@pytest.mark.parametrize("after", ["-1", "x", "1.5", str(2**63), "1e3"])
def test_a_poll_with_a_bad_position_gets_400(chat, after):
    answer = chat().poll(after=after)
    assert answer.status_code == 400 and answer.json()["error"].startswith("after: ")


def test_other_methods_get_405(chat, client):
    visitor = chat()
    answer = client.put(f"/webchat/{visitor.key}/messages", headers={"X-Chat-Token": visitor.token})
    assert answer.status_code == 405 and answer.json() == {"error": 'Method "PUT" not allowed.'}


@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=300) | st.text(max_size=100).map(lambda text: json.dumps({"text": text}).encode()))
def test_any_body_gets_a_json_answer_never_an_error_of_ours(chat, settings, body):
    settings.RATELIMIT_ENABLE = False
    answer = chat().post(body)
    assert answer.status_code in (201, 400)
    assert set(answer.json()) <= {"message", "error"}


def test_a_poll_with_nothing_new_reads_only_the_key(chat, django_assert_num_queries):
    visitor = chat()
    last = visitor.send("Hi").json()["message"]["id"]
    with django_assert_num_queries(1):  # the key's lookup; the cache knows there is nothing after last
        assert visitor.poll(after=last).json() == {"messages": []}
    with django_assert_num_queries(2):  # something new: the messages are read
        assert len(visitor.poll(after=0).json()["messages"]) == 1


def test_a_poll_finds_a_message_the_cache_has_not_heard_of(chat):
    from django.core.cache import cache

    visitor = chat()
    assert visitor.poll().json() == {"messages": []}  # the cache now says: nothing in this conversation
    visitor.send("Hi")
    cache.clear()  # a lost cache entry costs a query, never a message
    assert [m["text"] for m in visitor.poll().json()["messages"]] == ["Hi"]


@pytest.mark.django_db(transaction=True)  # the delete commits on a connection of its own
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite's transactions take its one write lock as they begin: no delete commits in between",
)
def test_a_message_whose_automation_is_deleted_before_it_commits_gets_404(chat, make_chat):
    from django.db.models.signals import post_save

    from automations.models import Automation
    from tests.races import at_once

    automation, key = make_chat()
    visitor, deleted = chat(key=key), []

    def deleted_meanwhile(sender, instance, created, **kwargs):
        """The visitor's message is written, not committed: the automation is deleted and committed elsewhere."""
        if created:
            deleted.extend(at_once(lambda: services.delete_automation(automation=automation)))

    post_save.connect(deleted_meanwhile, sender=Message)
    try:
        answer = visitor.send("Hi")  # its rows fail their foreign keys as they commit
    finally:
        post_save.disconnect(deleted_meanwhile, sender=Message)
    assert deleted == [None]
    assert (answer.status_code, answer.json()) == (404, {"error": "Not found."})
    assert not Automation.objects.filter(pk=automation.pk).exists()
    assert not Message.objects.exists() and not Run.objects.exists()
