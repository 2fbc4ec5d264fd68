"""overrides.django_cache.RedisCache: incr in one round trip, with Django's contract."""

import pytest
from django.conf import settings
from django.core.cache import caches

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL")


def test_incr_counts_an_existing_key():
    cache = caches["default"]
    cache.set("counter", 5)
    assert cache.incr("counter") == 6
    assert cache.incr("counter", 10) == 16
    assert cache.get("counter") == 16


def test_incr_of_a_missing_key_raises_and_creates_nothing():
    cache = caches["default"]
    with pytest.raises(ValueError):
        cache.incr("missing")
    assert cache.get("missing") is None


def test_the_counter_keeps_its_expiry():
    cache = caches["default"]
    cache.add("windowed", 1, 60)
    cache.incr("windowed")
    client = cache._cache.get_client("windowed")
    assert 0 < client.ttl(cache.make_and_validate_key("windowed")) <= 60


def test_incr_with_expiry_creates_the_counter_with_its_timeout():
    cache = caches["default"]
    assert cache.incr_with_expiry("claimed", 3, 60) == 3
    assert cache.incr_with_expiry("claimed", 2, 600) == 5
    client = cache._cache.get_client("claimed")
    assert 0 < client.ttl(cache.make_and_validate_key("claimed")) <= 60  # the first timeout stays
    assert cache.get("claimed") == 5
