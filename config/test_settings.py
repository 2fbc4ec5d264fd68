"""Settings of the test suite: the real settings module, with test hosts and a throwaway secret.

Only defaults are set here: DATABASE_URL and REDIS_URL from the
environment still choose PostgreSQL and Redis, as CI does.
"""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-any-deployment")
# A secret of its own, as check flowgate.W001 asks of a deployment.
os.environ.setdefault("URL_KEY_SECRET", "test-only-url-key-secret-not-for-any-deployment")
os.environ.setdefault("BASE_URL", "http://testserver")
# Builds must be visible to the very next request in a test.
os.environ.setdefault("FEED_VERSION_CHECK_SECONDS", "0")
os.environ.setdefault("FLOWGATE_VAR_DIR", os.path.join(os.path.dirname(os.path.dirname(__file__)), "var", "test"))

from config.settings import *  # noqa: E402,F403

STATIC_ROOT = VAR_DIR / "static"  # noqa: F405
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
