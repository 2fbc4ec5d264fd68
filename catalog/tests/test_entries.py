"""Entries and their etags: exactly the public fields, and an etag that follows what the feed shows."""

import json

from catalog.entries import build_entry, entry_etag, iter_entries
from catalog.feed import build_feed
from catalog.models import App, Operation


def entry_of(slug):
    return next(e for e in iter_entries() if e["slug"] == slug)


def test_the_etag_is_a_hash_of_the_shown_content(three_apps):
    entry = entry_of("alpha")
    content = {k: v for k, v in entry.items() if k != "etag"}
    assert entry["etag"] == entry_etag(content)


def test_the_same_catalog_gives_the_same_etags(three_apps):
    assert [e["etag"] for e in iter_entries()] == [e["etag"] for e in iter_entries()]


def test_renaming_an_operation_changes_the_etag(three_apps):
    before = entry_of("alpha")
    operation = Operation.objects.get(app__slug="alpha", kind="trigger")
    operation.name = "Brand New Thing"
    operation.save()
    after = entry_of("alpha")
    assert after["etag"] != before["etag"]
    assert after["last_op_modified"] >= before["last_op_modified"]
    assert after["last_updated"] == after["last_op_modified"]


def test_an_unlisted_operation_is_not_published(three_apps):
    Operation.objects.filter(app__slug="alpha", kind="action").update(listed=False)
    entry = entry_of("alpha")
    assert entry["actions"] == [] and entry["action_count"] == 0


def test_another_apps_edit_leaves_this_etag_alone(three_apps):
    before = entry_of("alpha")["etag"]
    App.objects.filter(slug="beta").update(description="changed")
    assert entry_of("alpha")["etag"] == before


def test_a_rank_change_changes_the_etag(three_apps):
    before = entry_of("beta")
    App.objects.filter(slug="beta").update(popularity=10_000)
    after = entry_of("beta")
    assert (after["sort_order"], after["tier"]) == (1, "A")
    assert after["etag"] != before["etag"]


def test_build_entry_uses_null_for_a_missing_category():
    from datetime import UTC, datetime

    app = {
        "slug": "x",
        "name": "X",
        "description": "",
        "category": "",
        "auth_type": "none",
        "app_domain": "x.example",
        "retired_at": None,
        "updated_at": datetime(2026, 1, 1, tzinfo=UTC),
    }
    entry = build_entry(app, [], sort_order=1, tier="D", base_url="https://app.example.com")
    assert entry["category"] is None
    assert entry["last_updated"] == "2026-01-01T00:00:00Z"
    assert entry["last_op_modified"] is None


def test_the_build_copies_tier_and_sort_order_to_the_apps(three_apps):
    build_feed()
    assert list(App.objects.order_by("sort_order").values_list("slug", "tier", "sort_order")) == [
        ("alpha", "A", 1),
        ("beta", "B", 2),
        ("gamma", "D", 3),
    ]


def test_bodies_are_compact_utf8_json(client, make_catalog):
    from conftest import app_doc

    make_catalog(app_doc("cafe", name="Café Ω"))
    body = client.get("/catalog/v1/apps/cafe").content
    assert "Café Ω".encode() in body
    assert json.loads(body)["name"] == "Café Ω"
