"""The approval page /moderation?queue={key}: GET shows and never decides; a POST with CSRF decides one item once."""

import pytest
from django.test import Client, override_settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from automations.models import Run
from interfaces.approvals import queues
from interfaces.models import ApprovalItem
from interfaces.tests.support import deliver

pytestmark = pytest.mark.django_db


def decide(client, path, item, decision="approve", comment="", **extra):
    return client.post(path, {"item": item, "decision": decision, "comment": comment}, **extra)


def test_opening_the_link_shows_the_pending_item_and_decides_nothing(client, queue_path, waiting_run):
    for method in (client.get, client.head):
        response = method(queue_path)
        assert response.status_code == 200
    page = client.get(queue_path).content.decode()
    assert "Refund order 7" in page and "Customer Ada asks for 30 EUR." in page
    assert 'value="approve"' in page and 'value="reject"' in page and "csrfmiddlewaretoken" in page
    assert "<pre>{\n  &quot;order&quot;: 7\n}</pre>" in page  # its details as JSON, not as Python shows them
    item = ApprovalItem.objects.get()
    assert item.decision == "" and item.decided_at is None
    waiting_run.refresh_from_db()
    assert waiting_run.status == Run.Status.WAITING and waiting_run.answer is None


def test_a_get_with_decision_parameters_in_the_query_decides_nothing(client, queue_path, waiting_run):
    item = ApprovalItem.objects.get()
    response = client.get(f"{queue_path}&item={item.pk}&decision=approve")
    assert response.status_code == 200
    item.refresh_from_db()
    assert item.decision == ""


def test_the_page_is_never_cached_nor_indexed(client, queue_path):
    response = client.get(queue_path)
    assert "no-store" in response["Cache-Control"]
    assert response["X-Robots-Tag"] == "noindex, nofollow"


@pytest.mark.parametrize("mangle", [lambda key: key[:-1], lambda key: key + "x", lambda key: key.upper(), lambda _: ""])
def test_an_altered_or_missing_key_gets_the_unavailable_page(client, queue_path, mangle):
    path, key = queue_path.split("?queue=")
    response = client.get(f"{path}?queue={mangle(key)}")
    unknown = client.get("/moderation?queue=never-issued")
    assert response.status_code == unknown.status_code == 404
    assert response.content == unknown.content
    assert b"not available" in response.content


def test_a_post_without_csrf_is_refused_and_decides_nothing(queue_path, waiting_run):
    strict = Client(enforce_csrf_checks=True)
    response = decide(strict, queue_path, ApprovalItem.objects.get().pk)
    assert response.status_code == 403
    assert ApprovalItem.objects.get().decision == ""


def test_a_post_with_csrf_decides_and_shows_the_outcome_when_and_from_which_ip(queue_path, waiting_run):
    browser = Client(enforce_csrf_checks=True)
    browser.get(queue_path)
    token = browser.cookies["csrftoken"].value
    item = ApprovalItem.objects.get()
    response = browser.post(
        queue_path,
        {"item": item.pk, "decision": "reject", "comment": "too much", "csrfmiddlewaretoken": token},
        REMOTE_ADDR="203.0.113.9",
    )
    assert response.status_code == 303  # then a GET: reloading the page it shows sends nothing again
    response = browser.get(response["Location"], REMOTE_ADDR="203.0.113.9")
    assert response.status_code == 200
    page = response.content.decode()
    assert "The decision on “Refund order 7” is recorded" in page
    assert 'class="state state--rejected">rejected<' in page and "from 203.0.113.9" in page and "too much" in page
    item.refresh_from_db()
    assert (item.decision, item.comment, item.decided_from) == ("rejected", "too much", "203.0.113.9")
    waiting_run.refresh_from_db()
    assert waiting_run.answer["decision"] == "rejected"


def test_reloading_the_page_after_a_decision_repeats_nothing_and_still_says_it_is_recorded(
    client, queue_path, waiting_run
):
    item = ApprovalItem.objects.get()
    shown = decide(client, queue_path, item.pk, "approve")["Location"]
    for _ in range(2):  # the page, then its reload
        page = client.get(shown)
        assert page.status_code == 200 and "The decision on “Refund order 7” is recorded" in page.content.decode()
    for odd in ("9" * 40, "\u00b2", "%C2%B2", "-1", ""):  # no such item; not ASCII digits ("²".isdigit() holds)
        page = client.get(queue_path + "&decided=" + odd)
        assert page.status_code == 200 and "recorded" not in page.content.decode(), odd
    assert ApprovalItem.objects.get().decision == "approved"


def test_the_ip_shown_is_the_one_the_trusted_proxies_vouch_for(client, queue_path, waiting_run, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    item = ApprovalItem.objects.get()
    decide(client, queue_path, item.pk, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="1.1.1.1, 198.51.100.4")
    item.refresh_from_db()
    assert item.decided_from == "198.51.100.4"


def test_a_second_decision_sees_the_first_one_and_changes_nothing(client, queue_path, waiting_run):
    item = ApprovalItem.objects.get()
    assert decide(client, queue_path, item.pk, "approve").status_code == 303
    response = decide(client, queue_path, item.pk, "reject", comment="no")
    assert response.status_code == 409
    assert "was already decided" in response.content.decode()
    assert 'class="state state--approved">approved<' in response.content.decode()
    item.refresh_from_db()
    assert (item.decision, item.comment) == ("approved", "")


def test_an_item_of_another_queue_cannot_be_decided_through_this_link(
    client, queue_path, make_automation, another_account
):
    from interfaces.tests.support import ASK_THEN_RECORD

    other_run = deliver(make_automation(ASK_THEN_RECORD, user=another_account, name="Other"))
    other_item = ApprovalItem.objects.get(run=other_run)
    response = decide(client, queue_path, other_item.pk)
    assert response.status_code == 404
    assert "not in this queue" in response.content.decode()
    other_item.refresh_from_db()
    assert other_item.decision == ""
    assert "Refund order" not in response.content.decode().split("Waiting for a decision")[0]


@pytest.mark.parametrize(
    "form",
    [
        {"item": "abc", "decision": "approve"},
        {"item": "1", "decision": "maybe"},
        {"item": "99999999999999999999999", "decision": "approve"},
        {"decision": "approve"},
        {"item": "1", "decision": "approve", "comment": "x" * 2001},
        {"item": "1", "decision": "approve", "comment": "nul\x00byte"},
        {"item": "1", "decision": "approve", "comment": "red \x9b31m"},
    ],
)
def test_a_malformed_decision_gets_400_and_decides_nothing(client, queue_path, waiting_run, form):
    response = client.post(queue_path, form)
    assert response.status_code == 400
    assert ApprovalItem.objects.get().decision == ""


def test_an_item_whose_run_ended_is_no_longer_pending_and_cannot_be_decided(client, queue_path, waiting_run):
    from automations import runs

    runs.end_waiting(automation_id=waiting_run.automation_id, reason="ended")
    page = client.get(queue_path).content.decode()
    assert "Nothing is waiting for a decision" in page and "Its run ended before anybody decided." in page
    response = decide(client, queue_path, ApprovalItem.objects.get().pk)
    assert response.status_code == 409
    assert ApprovalItem.objects.get().decision == ""


def test_requests_past_the_per_ip_limit_get_429_with_retry_after(client, queue_path, settings):
    settings.APPROVAL_RATE_IP = "3/m"
    statuses = [client.get(queue_path, REMOTE_ADDR="192.0.2.7").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = client.get(queue_path, REMOTE_ADDR="192.0.2.7")
    assert int(refused["Retry-After"]) > 0
    assert client.get(queue_path, REMOTE_ADDR="192.0.2.8").status_code == 200  # another address, its own count


def test_other_methods_get_405(client, queue_path):
    assert client.put(queue_path).status_code == 405
    assert client.delete(queue_path).status_code == 405


def test_decided_items_are_listed_newest_first_with_their_outcome(client, queue_path, approval_automation):
    deliver(approval_automation, b'{"order": 8}')
    first, second = ApprovalItem.objects.order_by("pk")
    decide(client, queue_path, first.pk, "approve")
    decide(client, queue_path, second.pk, "reject")
    pending, closed = queues.items_of(first.queue)
    assert pending == [] and [(view.id, view.state) for view in closed] == [
        (second.pk, "rejected"),
        (first.pk, "approved"),
    ]


def test_a_decision_after_the_expiry_is_refused_even_before_the_sweeper_came_by(client, make_automation):
    from datetime import timedelta

    from django.utils import timezone

    from interfaces.tests.support import steps_with

    run = deliver(make_automation(steps_with(expires_after=60)))
    item = ApprovalItem.objects.get()
    ApprovalItem.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    url = queues.approval_url(item.queue)
    response = decide(client, url[url.index("/moderation") :], item.pk)
    assert response.status_code == 409
    run.refresh_from_db()
    assert run.status == Run.Status.WAITING and run.answer is None  # the sweeper ends it as on_expiry says


@override_settings(RATELIMIT_ENABLE=False)  # many examples from one address
@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.text(max_size=300))
def test_any_key_that_was_never_issued_gets_the_same_unavailable_page(client, key):
    never_issued = client.get("/moderation", {"queue": "never-issued"})
    response = client.get("/moderation", {"queue": key})
    assert response.status_code == 404 and response.content == never_issued.content


def test_a_german_browser_gets_the_page_in_german(client, queue_path, waiting_run):
    page = client.get(queue_path, HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9").content.decode()
    assert "Wartet auf eine Entscheidung" in page and ">Freigeben<" in page and ">Ablehnen<" in page
    assert "Refund order 7" in page  # the owner's text stays as written


def test_bidirectional_controls_in_an_item_cannot_show_it_reversed_to_its_approver(client, approval_automation):
    from urllib.parse import urlsplit

    from interfaces.approvals.queues import approval_url

    run = deliver(approval_automation, b'{"order": "\\u202e0001", "customer": "\\u2067Ada", "amount": 30}')
    queue = ApprovalItem.objects.get(run=run).queue
    link = urlsplit(approval_url(queue))
    page = client.get(f"{link.path}?{link.query}").content.decode()
    assert "\u202e" not in page and "\u2067" not in page
    assert "<bdi>Refund order \ufffd0001</bdi>" in page
    assert 'dir="auto">Customer \ufffdAda asks for 30 EUR.' in page
    assert ApprovalItem.objects.get(run=run).title == "Refund order \u202e0001"  # stored as it came
