"""Popularity bands: sort_order 1..N and tier A/B/C/D from each app's popularity figure."""

import math
from typing import NamedTuple

# Shares of the ranked apps (popularity above 0), from the most popular down.
TIER_A_SHARE = 0.10
TIER_B_SHARE = 0.20


class Rank(NamedTuple):
    sort_order: int
    tier: str


def rank(popularity_by_slug: dict[str, int]) -> dict[str, Rank]:
    """Rank apps by popularity, highest first; equal figures are ordered by slug.

    Ranked apps (popularity > 0): the top 10% (rounded up) are tier A, the
    next 20% (rounded up) tier B, the rest tier C. Unranked apps (0) are tier
    D and follow every ranked app, ordered by slug. The order depends only on
    the figures and slugs, so the same catalog always gives the same feed.
    """
    ranked = sorted((s for s, p in popularity_by_slug.items() if p > 0), key=lambda s: (-popularity_by_slug[s], s))
    unranked = sorted(s for s, p in popularity_by_slug.items() if p <= 0)
    a_end = math.ceil(len(ranked) * TIER_A_SHARE)
    b_end = a_end + math.ceil(len(ranked) * TIER_B_SHARE)
    result = {}
    for index, slug in enumerate(ranked):
        tier = "A" if index < a_end else "B" if index < b_end else "C"
        result[slug] = Rank(index + 1, tier)
    for index, slug in enumerate(unranked, start=len(ranked)):
        result[slug] = Rank(index + 1, "D")
    return result
