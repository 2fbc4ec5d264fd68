"""Popularity bands: sort_order and tier."""

from catalog.popularity import rank


def test_it_orders_by_popularity_then_slug():
    ranks = rank({"b": 50, "a": 50, "c": 90, "z": 0, "y": 0})
    assert [s for s, _ in sorted(ranks.items(), key=lambda kv: kv[1].sort_order)] == ["c", "a", "b", "y", "z"]
    assert sorted(r.sort_order for r in ranks.values()) == [1, 2, 3, 4, 5]


def test_tiers_follow_the_documented_bands():
    ranks = rank({f"app-{i:02d}": 100 - i for i in range(20)} | {"unranked": 0})
    tiers = [ranks[f"app-{i:02d}"].tier for i in range(20)]
    assert tiers == ["A"] * 2 + ["B"] * 4 + ["C"] * 14
    assert ranks["unranked"] == (21, "D")


def test_a_single_ranked_app_is_tier_a():
    assert rank({"solo": 1})["solo"].tier == "A"


def test_the_same_figures_always_give_the_same_order():
    figures = {f"s{i}": i % 3 for i in range(50)}
    assert rank(figures) == rank(dict(reversed(list(figures.items()))))
