"""edge/limits.py: the low-rate limits' counting, stopping at the first limit and failing open."""

import logging

import pytest
from django.test import RequestFactory

from edge import limits

DOWN = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:9/0"}


def count(counters) -> int | None:
    return limits.count(RequestFactory().post("/"), counters, what="test")


def test_a_request_is_refused_once_a_counter_passes_its_rate_and_says_how_long_to_wait():
    answers = [count([("t:ip", "198.51.100.7", "3/m")]) for _ in range(4)]
    assert answers[:3] == [None, None, None]
    assert 1 <= answers[3] <= 60


def test_identities_and_groups_count_apart():
    for _ in range(2):
        assert count([("t:ip", "198.51.100.7", "2/m")]) is None
    assert count([("t:ip", "198.51.100.8", "2/m")]) is None
    assert count([("t:other", "198.51.100.7", "2/m")]) is None
    assert count([("t:ip", "198.51.100.7", "2/m")]) is not None


def test_a_refused_request_does_not_use_up_the_counters_after_the_one_it_passed():
    tight, loose = ("t:tight", "x", "1/m"), ("t:loose", "x", "2/m")
    assert count([tight, loose]) is None  # loose: 1
    assert count([tight, loose]) is not None  # refused by tight: loose not counted
    assert count([loose]) is None  # loose: 2, still allowed
    assert count([loose]) is not None


@pytest.mark.parametrize("what", ["sign-in attempt", "chat message"])
def test_an_unreachable_counter_lets_requests_through_and_warns(settings, caplog, what):
    settings.CACHES = {**settings.CACHES, "down": DOWN}  # nothing listens on port 9 here
    settings.RATELIMIT_USE_CACHE = "down"
    with caplog.at_level(logging.WARNING, logger="edge.limits"):
        answers = [limits.count(RequestFactory().post("/"), [("t:ip", "x", "1/m")], what=what) for _ in range(3)]
    assert answers == [None, None, None]
    assert f"{what} counter unreachable" in caplog.text


def test_switched_off_nothing_is_counted(settings):
    settings.RATELIMIT_ENABLE = False
    assert [count([("t:ip", "x", "1/m")]) for _ in range(3)] == [None, None, None]


def test_every_policy_counts_by_settings_that_hold_a_rate():
    from django.conf import settings

    from catalog.ratelimits import parse_rate

    for policy, counters in limits.POLICIES.items():
        for counter in counters:
            assert parse_rate(getattr(settings, counter.rate_setting)), (policy, counter)


def test_a_policy_counts_the_client_and_named_identities_with_an_automations_own_rates(settings):
    settings.CHAT_RATE_CONVERSATION = "100/m"
    request = RequestFactory().post("/", REMOTE_ADDR="198.51.100.9")

    def message(conversation, own=None):
        return limits.retry_after(request, "chat message", own=own, conversation=conversation, widget="7")

    own = {"per_conversation": "2/m"}
    assert [message("c1", own) for _ in range(2)] == [None, None]
    assert message("c1", own) is not None  # the widget's own rate replaced the default
    assert message("c2", own) is None  # another conversation counts apart
    assert message("c1") is None  # under the default rate


def test_a_scoped_policy_counts_each_scope_apart(settings):
    settings.FORM_RATE_IP, settings.FORM_RATE_FORM = "1/m", "100/m"
    request = RequestFactory().post("/", REMOTE_ADDR="198.51.100.10")
    assert limits.retry_after(request, "form submission", scope="a") is None
    assert limits.retry_after(request, "form submission", scope="a") is not None
    assert limits.retry_after(request, "form submission", scope="b") is None
