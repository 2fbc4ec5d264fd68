"""Settings of the test suite: the real settings module, with test hosts and a throwaway secret.

Only defaults are set here: DATABASE_URL and REDIS_URL from the
environment still choose PostgreSQL and Redis, as CI does.
"""

import os
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-any-deployment")
# A secret of its own, as check flowgate.W001 asks of a deployment.
os.environ.setdefault("URL_KEY_SECRET", "test-only-url-key-secret-not-for-any-deployment")
# A Fernet key of the tests' own, as a deployment sets one (docs/connections.md).
os.environ.setdefault("CONNECTION_KEYS", "dGVzdC1vbmx5LWNvbm5lY3Rpb24ta2V5LTAwMDAwMDA=")
os.environ.setdefault("BASE_URL", "http://testserver")
# Builds must be visible to the very next request in a test.
os.environ.setdefault("FEED_VERSION_CHECK_SECONDS", "0")
os.environ.setdefault("FLOWGATE_VAR_DIR", os.path.join(os.path.dirname(os.path.dirname(__file__)), "var", "test"))


def _own_redis_database(url: str, worker: int) -> str:
    """REDIS_URL with its database number moved up by the worker's number (redis://h:6379/1 -> /2 for gw1)."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(base + worker) % 16}"))


# make test runs the suite in several processes (pytest-xdist). pytest-django gives each its own test
# database; each also needs its own Redis database and var/ directory, since tests empty the cache (and
# with it the broker's queue) and the embedded default keeps its broker and cache in files there.
# A process the tests start with these settings inherits the moved values, and moves them no further.
worker = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1, ...
if worker and os.environ.get("FLOWGATE_TEST_PROCESS") != worker:
    os.environ["FLOWGATE_TEST_PROCESS"] = worker
    number = int(worker.removeprefix("gw"))
    os.environ["FLOWGATE_VAR_DIR"] = os.path.join(os.environ["FLOWGATE_VAR_DIR"], worker)
    if os.environ.get("REDIS_URL", "").startswith("redis://"):
        os.environ["REDIS_URL"] = _own_redis_database(os.environ["REDIS_URL"], number)

from config.settings import *  # noqa: E402,F403

STATIC_ROOT = VAR_DIR / "static"  # noqa: F405
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
