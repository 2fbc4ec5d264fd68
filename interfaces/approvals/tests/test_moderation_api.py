"""/moderation/api?queue={key}: deciding by script, authenticated by the queue's key, errors as {"error": ...}."""

import json

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from automations.models import Run
from interfaces.approvals import api
from interfaces.models import ApprovalItem

pytestmark = pytest.mark.django_db


@pytest.fixture
def api_path(queue_path):
    return queue_path.replace("/moderation?", "/moderation/api?")


def post(client, path, body, **extra):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(path, data, content_type="application/json", **extra)


def test_a_script_lists_the_pending_items(client, api_path, waiting_run):
    response = client.get(api_path)
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    [item] = response.json()["pending"]
    assert item["title"] == "Refund order 7" and item["state"] == "pending" and item["details"] == {"order": 7}


def test_a_script_decides_an_item_without_csrf_and_the_run_is_answered(client, api_path, waiting_run):
    item = ApprovalItem.objects.get()
    response = post(client, api_path, {"item": item.pk, "decision": "approved", "comment": "fine"})
    assert response.status_code == 200
    body = response.json()["item"]
    assert (body["state"], body["comment"], body["decided_from"]) == ("approved", "fine", "127.0.0.1")
    waiting_run.refresh_from_db()
    assert waiting_run.answer["decision"] == "approved"


def test_a_second_decision_by_script_gets_409_with_the_first(client, api_path, waiting_run):
    item = ApprovalItem.objects.get()
    post(client, api_path, {"item": item.pk, "decision": "rejected"})
    response = post(client, api_path, {"item": item.pk, "decision": "approved"})
    assert response.status_code == 409
    assert response.json()["error"] == "already decided" and response.json()["item"]["state"] == "rejected"


def test_an_unknown_key_or_an_item_of_another_queue_gets_404(client, api_path, waiting_run):
    item = ApprovalItem.objects.get()
    response = post(client, "/moderation/api?queue=nope", {"item": item.pk, "decision": "approved"})
    assert (response.status_code, response.json()) == (404, {"error": "not found"})
    assert client.get("/moderation/api").status_code == 404
    response = post(client, api_path, {"item": item.pk + 1, "decision": "approved"})
    assert (response.status_code, response.json()) == (404, {"error": "no such item in this queue"})
    assert ApprovalItem.objects.get().decision == ""


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"item": NaN, "decision": "approved"}',
        b"[" * 5000 + b"]" * 5000,
        b"\xff\xfe",
        b"[]",
        b'{"item": 1, "decision": "approve"}',
        b'{"item": "1; drop", "decision": "approved"}',
        b'{"item": 1, "decision": "approved", "comment": "a\\u0000b"}',
        b'{"item": 1, "decision": "approved", "comment": "a\\ud800"}',
        b'{"item": 1, "decision": "approved", "comment": "red \\u009b31m"}',  # C1: a terminal's escape
    ],
)
def test_a_malformed_body_gets_400_in_one_shape_and_decides_nothing(client, api_path, waiting_run, body):
    response = post(client, api_path, body)
    assert response.status_code == 400
    assert isinstance(response.json()["error"], str)
    assert ApprovalItem.objects.get().decision == ""


def test_a_body_over_the_limit_gets_413_and_decides_nothing(client, api_path, waiting_run):
    [item] = client.get(api_path).json()["pending"]
    padding = " " * api.MAX_BODY_BYTES  # whitespace: the JSON itself is a valid decision
    response = post(client, api_path, f'{{"item": {item["id"]}, "decision": "approved"}}{padding}')
    assert response.status_code == 413 and response.json() == {"error": "the body is too large"}
    assert ApprovalItem.objects.get().decision == ""


def test_a_body_declared_over_the_limit_gets_413_before_a_byte_is_read(client, api_path, waiting_run):
    from interfaces.chat.tests.test_chat_messages import Untouched

    declared = str(api.MAX_BODY_BYTES + 1)
    response = client.post(
        api_path, content_type="application/json", CONTENT_LENGTH=declared, **{"wsgi.input": Untouched()}
    )
    assert response.status_code == 413 and response.json() == {"error": "the body is too large"}
    assert ApprovalItem.objects.get().decision == ""


def test_the_api_shares_the_pages_per_ip_limit(client, api_path, queue_path, settings):
    settings.APPROVAL_RATE_IP = "2/m"
    client.get(queue_path)
    client.get(api_path)
    refused = client.get(api_path)
    assert refused.status_code == 429 and refused.json() == {"error": "rate limit exceeded"}
    assert int(refused["Retry-After"]) > 0


@override_settings(RATELIMIT_ENABLE=False)  # many examples from one address
@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=300) | st.text(max_size=200).map(lambda text: text.encode("utf-8", "surrogatepass")))
def test_any_body_gets_an_answer_and_never_a_server_error(client, api_path, waiting_run, body):
    response = post(client, api_path, body)
    assert response.status_code in (200, 400, 404, 409)
    assert "error" in response.json() or response.status_code == 200
    assert Run.objects.filter(status=Run.Status.WAITING).count() == 1 or ApprovalItem.objects.get().decision


def test_a_method_it_does_not_allow_gets_405_in_one_shape_with_allow(client, api_path):
    response = client.put(api_path, b"{}", content_type="application/json")
    assert response.status_code == 405 and set(response.json()) == {"error"}
    assert "POST" in response["Allow"]  # the view once set its headers anew, dropping DRF's Allow
