"""A hosted form page is sent once: a double click or a POST sent again goes to the run the first one started.

Each page carries its signed shown time (interfaces/forms/spam.py), different on
every GET; the first POST of a page claims it in the shared cache (an atomic
add, so that of two racing POSTs one claims it) and, once its run is
committed, records the run's id there. Any later POST of the same page
starts nothing and is sent to that run's session page. A cache that cannot
be reached claims nothing and lets every POST through.

The claim lives PENDING_SECONDS until the run's id replaces it: a process
that dies between the claim and its run's commit (killed, its request cut
off) leaves a claim nobody will complete, and the page must be sendable
again soon, not after a day. The run's id, once there, is kept SECONDS.
Each claim is a token of its own, so that a POST that fails after its
claim ran out lets go of its own claim only, never of a later POST's.
"""

import hashlib
import logging
import secrets

from django.core.cache import cache

logger = logging.getLogger(__name__)
SECONDS = 24 * 3600  # as long as a shown time is accepted
# What a POST does after its claim (keep its files, commit its run) takes well under a second; a claim left this
# long belongs to a POST that will never finish, and the page may start its run again.
PENDING_SECONDS = 30
UNREACHABLE = "unreachable"  # the claim of a POST let through without the cache


def _key(page: str) -> str:
    return "form-page-sent:" + hashlib.sha256(page.encode("utf-8", "replace")).hexdigest()


def claim(page: str) -> str | None:
    """The claim's token for the first POST of this page (or the first after an unfinished one's ran out), else None."""
    token = "pending:" + secrets.token_hex(8)
    try:
        return token if cache.add(_key(page), token, PENDING_SECONDS) else None
    except Exception:
        logger.warning("form page claims unreachable; letting the submission through", exc_info=True)
        return UNREACHABLE


def started(page: str, run_id: int) -> None:
    try:
        cache.set(_key(page), run_id, SECONDS)
    except Exception:
        logger.warning("form page claims unreachable; a resent page may start another run", exc_info=True)


def release(page: str, token: str) -> None:
    """The POST holding this claim failed on our side, its run not committed: the page may be sent again.

    A read, then a delete: another POST can claim the page only once this
    claim has run out, so the one moment left to a race is between the two.
    """
    try:
        if cache.get(_key(page)) == token:
            cache.delete(_key(page))
    except Exception:
        logger.warning("form page claims unreachable", exc_info=True)


def first_run_id(page: str) -> int | None:
    """The run the page's first POST started; None while it is being started (or its claim has just run out)."""
    try:
        value = cache.get(_key(page))
    except Exception:
        return None
    return value if isinstance(value, int) else None
