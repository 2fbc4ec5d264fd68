"""edge.process_cache: named process memories with a size cap and expiry, and one reset for all of them."""

import pytest

from edge import process_cache
from edge.process_cache import ProcessCache


@pytest.fixture
def clock(manual_clock):
    return manual_clock


def test_an_entry_is_served_until_its_seconds_have_passed(clock):
    memory = ProcessCache("test", max_size=10, seconds=5, clock=clock)
    memory.set("key", "value")
    clock.now += 4.9
    assert memory.get("key") == "value"
    clock.now += 0.1
    assert memory.get("key") is None
    assert memory.get("key", "default") == "default"


def test_seconds_given_to_set_override_the_caches_default(clock):
    memory = ProcessCache("test", max_size=10, seconds=5, clock=clock)
    memory.set("short", 1, seconds=1)
    memory.set("long", 2, seconds=60)
    clock.now += 30
    assert memory.get("short") is None
    assert memory.get("long") == 2


def test_an_entry_without_seconds_never_expires(clock):
    memory = ProcessCache("test", max_size=10, clock=clock)
    memory.set("key", "value")
    clock.now += 10**9
    assert memory.get("key") == "value"


def test_an_expired_entry_is_still_there_for_a_stale_read(clock):
    memory = ProcessCache("test", max_size=10, seconds=1, clock=clock)
    memory.set("key", "last good")
    clock.now += 2
    assert memory.get("key") is None
    assert memory.get("key", stale=True) == "last good"


def test_setting_an_entry_again_restarts_its_expiry(clock):
    memory = ProcessCache("test", max_size=10, seconds=5, clock=clock)
    memory.set("key", 1)
    clock.now += 4
    memory.set("key", 2)
    clock.now += 4
    assert memory.get("key") == 2


def test_a_full_cache_evicts_the_entry_set_longest_ago(clock):
    memory = ProcessCache("test", max_size=3, clock=clock)
    for key in "abc":
        memory.set(key, key)
    memory.set("a", "again")  # a is now the newest
    memory.set("d", "d")
    assert len(memory) == 3
    assert memory.get("b") is None
    assert [memory.get(key) for key in "acd"] == ["again", "c", "d"]


def test_pop_and_clear_forget_entries(clock):
    memory = ProcessCache("test", max_size=10, clock=clock)
    memory.set("a", 1)
    memory.set("b", 2)
    memory.pop("a")
    memory.pop("never set")
    assert memory.get("a") is None and memory.get("b") == 2
    memory.clear()
    assert len(memory) == 0 and memory.get("b", stale=True) is None


def test_a_cache_holds_at_least_one_entry():
    with pytest.raises(ValueError):
        ProcessCache("test", max_size=0)


def test_a_name_gives_the_same_cache_every_time():
    first = process_cache.named("tests.same", max_size=5)
    assert process_cache.named("tests.same", max_size=5) is first


def test_reset_all_empties_every_named_cache_then_calls_the_reset_callbacks():
    memory = process_cache.named("tests.reset", max_size=5)
    memory.set("key", "value")
    seen = []
    callback = process_cache.on_reset(lambda: seen.append(memory.get("key", stale=True)))
    try:
        process_cache.reset_all()
        assert memory.get("key", stale=True) is None
        assert seen == [None]  # the caches were empty when the callback ran
    finally:
        process_cache._on_reset.remove(callback)


def test_a_callback_registered_twice_is_called_once():
    calls = []

    def callback():
        calls.append(1)

    process_cache.on_reset(callback)
    process_cache.on_reset(callback)
    try:
        process_cache.reset_all()
        assert calls == [1]
    finally:
        process_cache._on_reset.remove(callback)


@pytest.mark.django_db
def test_one_reset_forgets_the_switch_the_remembered_keys_the_feed_and_the_leases(client, three_apps, make_automation):
    from automations import services
    from catalog import ratelimits, serving
    from hooks import maintenance, selectors
    from publickeys import selectors as key_selectors

    maintenance.active()
    key = services.hook_url(make_automation([])).rsplit("automation-", 1)[1]
    assert selectors.automation_id_for_hook_key(key) is not None
    assert client.get("/catalog/v1/apps").status_code == 200
    memories = [
        maintenance._switch,
        key_selectors._found,
        serving._version,
        serving._documents,
        ratelimits._leases._leases,
    ]
    assert all(len(memory) for memory in memories)
    process_cache.reset_all()
    assert [len(memory) for memory in memories] == [0] * len(memories)
    assert selectors.remembered_hook_key(key) is None
