"""Every miss costs the same database work (DESIGN.md contract 3): one query, the same statement as a hit's.

No timing is measured: what a miss costs is pinned by the queries it sends,
per lookalike key, through the one lookup and through the webhook and web
service selectors built on it.
"""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from automations import selectors as automation_selectors
from automations import services as automation_services
from hooks import selectors as hook_selectors
from publickeys import crypto
from publickeys.models import PublicKey
from publickeys.selectors import target_id_for_key

pytestmark = pytest.mark.django_db

Purpose = PublicKey.Purpose


def key_in(url: str) -> str:
    return re.split(r"automation-|webservice-", url)[-1]


def with_digest_prefix(digest: str, length: int = 3) -> str:
    """A key that is not the issued one but whose digest begins as the issued key's does."""
    n = 0
    while not crypto.digest(candidate := f"prefix-{n}").startswith(digest[:length]):
        n += 1
    return candidate


def keys_of(automation) -> dict:
    return {
        Purpose.WEBHOOK: key_in(automation_services.hook_url(automation)),
        Purpose.WEB_SERVICE: key_in(automation_services.web_service_url(automation)),
    }


@pytest.fixture
def lookalikes(make_automation):
    """For a purpose (webhook or web service): keys that must all miss, by name, around a live key of that purpose."""
    live = keys_of(make_automation([]))
    reissued = make_automation([], name="reissued")
    retired = keys_of(reissued)
    automation_services.issue_new_urls(automation=reissued)
    deleted_automation = make_automation([], name="deleted")
    deleted = keys_of(deleted_automation)
    automation_services.delete_automation(automation=deleted_automation)

    def around(purpose: str) -> dict[str, str]:
        key = live[purpose]
        other = live[Purpose.WEB_SERVICE if purpose == Purpose.WEBHOOK else Purpose.WEBHOOK]
        return {
            "unknown": crypto.new_key(),
            "of another purpose": other,
            "one character off": key[:-1] + ("a" if key[-1] != "a" else "b"),
            "one character short": key[:-1],
            "one character more": key + "a",
            "other case": key.swapcase(),
            "with a space": " " + key,
            "right digest prefix": with_digest_prefix(crypto.digest(key)),
            "empty": "",
            "very long": key * 400,
            "non-ASCII": "\u00e9\u4e2d\U0001f511" * 8,
            "a lone surrogate": "\ud800" + key[1:],
            "the digest itself": crypto.digest(key),
            "a deleted target's": deleted[purpose],
            "retired": retired[purpose],
        }

    return around


def statements(queries: list[dict], key: str) -> list[str]:
    """The SQL sent, with the key's digest in place of {digest} and the moment of the lookup in place of {now}
    (an expiring key is live until then): what is left is the statement itself."""
    return [
        re.sub(r"'[0-9-]+ [0-9:.]+(?:\+00:00)?'", "{now}", query["sql"].replace(crypto.digest(key), "{digest}"))
        for query in queries
    ]


@pytest.mark.parametrize("purpose", [Purpose.WEBHOOK, Purpose.WEB_SERVICE])
def test_every_lookalike_key_costs_exactly_the_query_a_hit_costs(make_automation, lookalikes, purpose):
    automation = make_automation([], name="hit")
    key = keys_of(automation)[purpose]
    with CaptureQueriesContext(connection) as hit:
        assert target_id_for_key(purpose=purpose, key=key) == automation.pk
    assert len(hit.captured_queries) == 1
    expected = statements(hit.captured_queries, key)
    for name, lookalike in lookalikes(purpose).items():
        with CaptureQueriesContext(connection) as miss:
            assert target_id_for_key(purpose=purpose, key=lookalike) is None, name
        assert statements(miss.captured_queries, lookalike) == expected, name


def test_a_purpose_that_does_not_exist_costs_the_same_query(make_automation):
    key = keys_of(make_automation([]))[Purpose.WEBHOOK]
    with CaptureQueriesContext(connection) as hit:
        target_id_for_key(purpose=Purpose.WEBHOOK, key=key)
    with CaptureQueriesContext(connection) as miss:
        assert target_id_for_key(purpose="carrier_pigeon", key=key) is None
    sent = [sql.replace("'carrier_pigeon'", "'webhook'") for sql in statements(miss.captured_queries, key)]
    assert sent == statements(hit.captured_queries, key)


def test_every_lookalike_webhook_key_costs_one_query(lookalikes, django_assert_num_queries):
    for name, key in lookalikes(Purpose.WEBHOOK).items():
        with django_assert_num_queries(1):
            assert hook_selectors.automation_id_for_hook_key(key) is None, name


def test_every_lookalike_web_service_key_costs_one_query(lookalikes, django_assert_num_queries):
    for name, key in lookalikes(Purpose.WEB_SERVICE).items():
        with django_assert_num_queries(1):
            assert automation_selectors.automation_for_web_service_key(key) is None, name


def test_a_web_service_call_reads_its_automation_in_the_one_statement_every_lookalike_sends(
    make_automation, lookalikes
):
    automation = make_automation([], name="hit")
    key = keys_of(automation)[Purpose.WEB_SERVICE]
    with CaptureQueriesContext(connection) as hit:
        assert automation_selectors.automation_for_web_service_key(key) == automation
    assert len(hit.captured_queries) == 1
    expected = statements(hit.captured_queries, key)
    for name, lookalike in lookalikes(Purpose.WEB_SERVICE).items():
        with CaptureQueriesContext(connection) as miss:
            assert automation_selectors.automation_for_web_service_key(lookalike) is None, name
        assert statements(miss.captured_queries, lookalike) == expected, name


def test_a_remembered_webhook_key_costs_no_query(make_automation, django_assert_num_queries):
    automation = make_automation([])
    hook = key_in(automation_services.hook_url(automation))
    assert hook_selectors.automation_id_for_hook_key(hook) == automation.pk
    with django_assert_num_queries(0):
        assert hook_selectors.automation_id_for_hook_key(hook) == automation.pk
        assert hook_selectors.remembered_hook_key(hook) == automation.pk
