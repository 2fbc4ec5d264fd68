"""Errors of the catalog feed, each mapped once to its response in catalog.responses."""


class FeedUnavailable(Exception):
    """The feed cannot produce a body it trusts (SPEC 7.1: 503 with Retry-After)."""

    def __init__(self, retry_after: int = 60):
        super().__init__(f"catalog feed unavailable; retry after {retry_after}s")
        self.retry_after = retry_after
