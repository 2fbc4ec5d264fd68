"""Feed rate limits: per client IP, IPv6 per /64, X-Forwarded-For trusted only behind configured proxies."""

import itertools
import pickle
import time

import pytest
from django.test import RequestFactory

from catalog import ratelimits
from catalog.bulk import build_bulk
from edge.process_cache import ProcessCache


@pytest.fixture
def low_limits(settings):
    settings.FEED_RATE_LIST = "3/5m"
    settings.FEED_RATE_LOGO = "2/5m"
    settings.FEED_RATE_BULK = "1/h"


def hit(client, path, ip="198.51.100.7", **extra):
    return client.get(path, REMOTE_ADDR=ip, **extra)


def test_the_defaults_are_those_of_the_spec(settings):
    assert settings.FEED_RATE_LIST == "300/5m"
    assert settings.FEED_RATE_LOGO == "1000/5m"
    assert settings.FEED_RATE_BULK == "10/h"


def test_list_and_detail_share_one_counter(client, three_apps, low_limits):
    assert hit(client, "/catalog/v1/apps").status_code == 200
    assert hit(client, "/catalog/v1/apps/alpha").status_code == 200
    assert hit(client, "/catalog/v1/apps/nope").status_code == 404
    response = hit(client, "/catalog/v1/apps")
    assert response.status_code == 429
    assert response.content == b"rate limit exceeded"
    assert 1 <= int(response["Retry-After"]) <= 300
    assert response["Access-Control-Allow-Origin"] == "*"
    assert hit(client, "/catalog/v1/apps/beta").status_code == 429


def test_the_full_default_list_limit_is_300(client, three_apps):
    for _ in range(300):
        assert hit(client, "/catalog/v1/apps/alpha", HTTP_IF_NONE_MATCH="*").status_code == 304
    assert hit(client, "/catalog/v1/apps").status_code == 429


def test_logo_and_bulk_have_their_own_counters(client, three_apps, low_limits):
    build_bulk()
    for _ in range(3):
        hit(client, "/catalog/v1/apps")
    assert hit(client, "/catalog/v1/apps").status_code == 429
    assert hit(client, "/catalog/v1/apps/alpha/logo").status_code == 200
    assert hit(client, "/catalog/v1/apps/alpha/logo").status_code == 200
    assert hit(client, "/catalog/v1/apps/alpha/logo").status_code == 429
    assert hit(client, "/catalog/v1/bulk").status_code == 200
    bulk = hit(client, "/catalog/v1/bulk")
    assert bulk.status_code == 429
    assert 1 <= int(bulk["Retry-After"]) <= 3600


def test_other_clients_keep_their_own_allowance(client, three_apps, low_limits):
    for _ in range(4):
        hit(client, "/catalog/v1/apps", ip="198.51.100.7")
    assert hit(client, "/catalog/v1/apps", ip="198.51.100.7").status_code == 429
    assert hit(client, "/catalog/v1/apps", ip="198.51.100.8").status_code == 200


def test_ipv6_clients_are_counted_per_64(client, three_apps, low_limits):
    for suffix in ("1", "2", "3"):
        assert hit(client, "/catalog/v1/apps", ip=f"2001:db8:1:2::{suffix}").status_code == 200
    assert hit(client, "/catalog/v1/apps", ip="2001:db8:1:2:ffff:ffff:ffff:ffff").status_code == 429
    assert hit(client, "/catalog/v1/apps", ip="2001:db8:1:3::1").status_code == 200


def test_a_spoofed_x_forwarded_for_is_ignored_by_default(client, three_apps, low_limits):
    for n in range(3):
        hit(client, "/catalog/v1/apps", HTTP_X_FORWARDED_FOR=f"203.0.113.{n}")
    response = hit(client, "/catalog/v1/apps", HTTP_X_FORWARDED_FOR="203.0.113.99")
    assert response.status_code == 429


def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(client, three_apps, low_limits, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.2"
    for _ in range(3):
        hit(client, "/catalog/v1/apps", ip=proxy, HTTP_X_FORWARDED_FOR="1.1.1.1, 203.0.113.5")
    assert hit(client, "/catalog/v1/apps", ip=proxy, HTTP_X_FORWARDED_FOR="203.0.113.5").status_code == 429
    # What the client wrote left of the proxy's entry does not buy a new allowance.
    assert hit(client, "/catalog/v1/apps", ip=proxy, HTTP_X_FORWARDED_FOR="9.9.9.9, 203.0.113.5").status_code == 429
    assert hit(client, "/catalog/v1/apps", ip=proxy, HTTP_X_FORWARDED_FOR="203.0.113.6").status_code == 200


@pytest.mark.parametrize(
    ("remote", "forwarded", "proxies", "expected"),
    [
        ("192.0.2.1", "", 0, "192.0.2.1"),
        ("192.0.2.1", "203.0.113.9", 0, "192.0.2.1"),
        ("10.0.0.1", "203.0.113.9", 1, "203.0.113.9"),
        ("10.0.0.1", "6.6.6.6, 203.0.113.9, 10.0.0.5", 2, "203.0.113.9"),
        ("10.0.0.1", "203.0.113.9", 3, "203.0.113.9"),
        ("10.0.0.1", "not-an-ip", 1, "10.0.0.1"),
        ("2001:db8:aa:bb:1:2:3:4", "", 0, "2001:db8:aa:bb::/64"),
        ("::ffff:192.0.2.44", "", 0, "192.0.2.44"),
    ],
)
def test_client_key(settings, remote, forwarded, proxies, expected):
    settings.TRUSTED_PROXY_COUNT = proxies
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert ratelimits.client_key(request) == expected


def test_it_sends_ratelimit_policy_and_ratelimit_headers(client, three_apps, low_limits):
    first = hit(client, "/catalog/v1/apps")
    assert first["RateLimit-Policy"] == '"list";q=3;w=300'
    name, remaining, reset = first["RateLimit"].split(";")
    assert (name, remaining) == ('"list"', "r=2")
    assert 1 <= int(reset.removeprefix("t=")) <= 300
    hit(client, "/catalog/v1/apps")
    hit(client, "/catalog/v1/apps")
    limited = hit(client, "/catalog/v1/apps")
    assert limited["RateLimit"].startswith('"list";r=0;')


def test_an_unreachable_counter_lets_requests_through(client, three_apps, low_limits, settings):
    settings.CACHES = {  # a Redis that refuses connections: nothing listens on port 9 here
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:9/0"}
    }
    for _ in range(5):
        response = hit(client, "/catalog/v1/apps")
        assert response.status_code == 200
        assert "RateLimit" not in response


def test_method_errors_do_not_use_up_the_allowance(client, three_apps, low_limits):
    for _ in range(5):
        assert client.post("/catalog/v1/apps", REMOTE_ADDR="198.51.100.7").status_code == 405
    assert hit(client, "/catalog/v1/apps").status_code == 200


def allowed(tables, limit, requests, now=1_000_000, end=1_000_300):
    """Requests served round-robin by several processes' lease tables; how many were within the limit."""
    return sum(tables[n % len(tables)].take("k", limit, now, end) <= limit for n in range(requests))


def test_processes_sharing_a_counter_never_grant_more_than_the_limit():
    for processes in (1, 2, 4):
        ratelimits.cache.clear()
        tables = [ratelimits.Leases() for _ in range(processes)]
        granted = allowed(tables, 300, 1000)
        # Spare units of the other processes' last batches are lost, never granted twice.
        assert 300 - (processes - 1) * 5 <= granted <= 300


def test_a_steady_client_costs_a_round_trip_only_every_few_requests():
    table, counts, totals = ratelimits.Leases(), [], [0]
    for _ in range(120):
        counts.append(table.take("k", 300, 1_000_000, 1_000_300))
        if (total := ratelimits.cache.get("k")) != totals[-1]:  # the shared counter moves once per claim
            totals.append(total)
    claims = [after - before for before, after in itertools.pairwise(totals)]
    assert counts == list(range(1, 121))
    assert claims[:4] == [1, 2, 4, 6]  # doubling up to limit/50
    assert len(claims) <= 23
    assert 0 <= totals[-1] - counts[-1] < claims[-1]  # every unit claimed was handed out, but the last batch's spares


def test_an_occasional_client_is_counted_one_by_one_in_a_low_limit(monkeypatch):
    table = ratelimits.Leases()
    assert [table.take("k", 3, 1_000_000, 1_000_300) for _ in range(4)] == [1, 2, 3, 4]
    assert ratelimits.cache.get("k") == 4


def seconds_to_expiry(settings, key: str) -> float:
    """When the shared counter's entry expires, as Redis or the embedded file cache recorded it."""
    if settings.REDIS_URL:
        return ratelimits.cache._cache.get_client(key).ttl(ratelimits.cache.make_and_validate_key(key))
    with open(ratelimits.cache._key_to_file(key), "rb") as entry:
        return pickle.load(entry) - time.time()  # FileBasedCache writes the expiry time first


def test_the_counter_expires_after_its_window(settings):
    table = ratelimits.Leases()
    table.take("k", 3000, 1_000_000, 1_003_600)
    assert 3600 < seconds_to_expiry(settings, "k") <= 3660
    for _ in range(200):  # claims after the first add to the counter
        table.take("k", 3000, 1_000_000, 1_003_600)
    assert 3600 < seconds_to_expiry(settings, "k") <= 3660


def test_a_lease_is_not_served_after_its_window_ends(manual_clock):
    clock = manual_clock
    table = ratelimits.Leases(ProcessCache("leases", max_size=10, clock=clock))
    assert [table.take("k", 300, 1_000_000, 1_000_300) for _ in range(2)] == [1, 2]  # a batch of 2: unit 3 is spare
    clock.now += 300
    assert table.take("k", 300, 1_000_000, 1_000_300) == 4  # claimed afresh: the spare unit went with its window
    assert ratelimits.cache.get("k") == 4


def test_a_full_lease_table_forgets_the_lease_claimed_longest_ago():
    memory = ProcessCache("leases", max_size=3)
    table = ratelimits.Leases(memory)
    for key in ("a", "b", "c", "d"):
        table.take(key, 300, 1_000_000, 1_000_300)
    assert [key for key in "abcd" if memory.get(key) is not None] == ["b", "c", "d"]


@pytest.mark.parametrize(
    ("rate", "parsed"), [("300/5m", (300, 300)), ("10/h", (10, 3600)), ("7/2d", (7, 172800)), ("1/s", (1, 1))]
)
def test_parse_rate(rate, parsed):
    assert ratelimits.parse_rate(rate) == parsed


def test_windows_are_offset_per_client_and_contain_now():
    ends = {ratelimits.window_end(f"198.51.100.{n}", 300, 1_000_000) for n in range(20)}
    assert len(ends) > 10
    assert all(1_000_000 < end <= 1_000_300 for end in ends)


def test_threads_of_one_process_share_its_claims_and_lose_no_units():
    import threading

    table = ratelimits.Leases()
    counts, start = [], threading.Barrier(8)

    def client():
        start.wait()
        for _ in range(30):
            counts.append(table.take("k", 300, 1_000_000, 1_000_300))

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(counts) == list(range(1, 241))  # every unit claimed is handed out once
    assert ratelimits.cache.get("k") - 240 <= 5  # at most the spare units of the last batch
