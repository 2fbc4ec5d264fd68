"""Errors of the catalog feed, each mapped once to its response in catalog.responses."""


class FeedUnavailable(Exception):
    """The feed cannot produce a body it trusts (SPEC 7.1: 503 with Retry-After)."""

    detail = "the catalog feed is temporarily unavailable"

    def __init__(self, retry_after: int = 60):
        super().__init__(f"{self.detail}; retry after {retry_after}s")
        self.retry_after = retry_after


class NoAppPublished(FeedUnavailable):
    """The catalog has no connectable app and no feed was ever built: a new install awaiting its catalog.

    Still a 503: the feed never answers 200 with an empty list (SPEC 2.2).
    """

    detail = "the catalog feed is temporarily unavailable: no app is published yet"
