"""A hosted form page is sent once: a double click or a POST sent again goes to the run the first one started.

Each page carries its signed shown time (interfaces/spam.py), different on
every GET; the first POST of a page claims it in the shared cache (an atomic
add, so that of two racing POSTs one claims it) and, once its run is
committed, records the run's id there. Any later POST of the same page
starts nothing and is sent to that run's session page. A cache that cannot
be reached claims nothing and lets every POST through.

The claim lives PENDING_SECONDS until the run's id replaces it: a process
that dies between the claim and its run's commit (killed, its request cut
off) leaves a claim nobody will complete, and the page must be sendable
again soon, not after a day. The run's id, once there, is kept SECONDS.
"""

import hashlib
import logging

from django.core.cache import cache

logger = logging.getLogger(__name__)
SECONDS = 24 * 3600  # as long as a shown time is accepted
# What a POST does after its claim (keep its files, commit its run) takes well under a second; a claim left this
# long belongs to a POST that will never finish, and the page may start its run again.
PENDING_SECONDS = 30
PENDING = 0


def _key(page: str) -> str:
    return "form-page-sent:" + hashlib.sha256(page.encode("utf-8", "replace")).hexdigest()


def claim(page: str) -> bool:
    """True for the first POST of this page (or the first after an unfinished one's claim ran out), else False."""
    try:
        return cache.add(_key(page), PENDING, PENDING_SECONDS)
    except Exception:
        logger.warning("form page claims unreachable; letting the submission through", exc_info=True)
        return True


def started(page: str, run_id: int) -> None:
    try:
        cache.set(_key(page), run_id, SECONDS)
    except Exception:
        logger.warning("form page claims unreachable; a resent page may start another run", exc_info=True)


def release(page: str) -> None:
    """The first POST failed on our side: the page may be sent again."""
    try:
        cache.delete(_key(page))
    except Exception:
        logger.warning("form page claims unreachable", exc_info=True)


def first_run_id(page: str) -> int | None:
    """The run the page's first POST started; None while it is being started (or its claim has just run out)."""
    try:
        return cache.get(_key(page)) or None
    except Exception:
        return None
