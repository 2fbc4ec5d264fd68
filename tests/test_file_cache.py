"""overrides.django_cache.FileCache, the embedded default's cache: a counter keeps its expiry and loses no count."""

import pickle
import threading
import time

import pytest

from overrides.django_cache import FileCache


@pytest.fixture
def cache(tmp_path):
    return FileCache(str(tmp_path), {})


def seconds_to_expiry(cache: FileCache, key: str) -> float:
    with open(cache._key_to_file(key), "rb") as entry:
        return pickle.load(entry) - time.time()  # FileBasedCache writes the expiry time first


def test_incr_keeps_the_expiry_the_counter_was_added_with(cache):
    assert cache.add("window", 0, 900)
    assert cache.incr("window") == 1
    assert cache.incr("window", 5) == 6
    assert 890 < seconds_to_expiry(cache, "window") <= 900
    assert cache.get("window") == 6


def test_incr_of_a_counter_that_never_expires_keeps_it_so(cache):
    cache.set("forever", 1, None)
    assert cache.incr("forever") == 2
    with open(cache._key_to_file("forever"), "rb") as entry:
        assert pickle.load(entry) is None


def test_incr_of_a_missing_or_expired_key_raises_and_creates_nothing(cache):
    with pytest.raises(ValueError):
        cache.incr("missing")
    cache.set("gone", 1, timeout=0)  # Django's "expire at once"
    with pytest.raises(ValueError):
        cache.incr("gone")
    assert cache.get("missing") is None and cache.get("gone") is None


def test_threads_counting_at_once_lose_no_count(cache):
    cache.add("shared", 0, 900)
    start = threading.Barrier(8)

    def count():
        start.wait()
        for _ in range(50):
            cache.incr("shared")

    threads = [threading.Thread(target=count) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.get("shared") == 400
    assert 800 < seconds_to_expiry(cache, "shared") <= 900
