"""System checks of settings that start-up accepts but that would hurt a deployment (flowgate.W001-W006, E001-E002)."""

from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks

PUBLIC_URLS = ("BASE_URL", "HOOKS_URL", "MCP_URL")
# PgBouncer keeps protocol-level prepared statements across its pooled server connections from this release on.
PGBOUNCER_PREPARED_STATEMENTS = (1, 21)


def check_url_key_secret(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """W001: URL_KEY_SECRET is SECRET_KEY (its default), so rotating SECRET_KEY would retire every issued URL.

    Skipped with DEBUG on: a local install runs on its development secret.
    """
    if settings.DEBUG or settings.URL_KEY_SECRET != settings.SECRET_KEY:
        return []
    return [
        checks.Warning(
            "URL_KEY_SECRET is SECRET_KEY: rotating SECRET_KEY would retire every webhook and web service URL.",
            hint="Set URL_KEY_SECRET to the current SECRET_KEY, so that issued URLs keep working, "
            "and SECRET_KEY to a new random value (this signs out admin sessions).",
            id="flowgate.W001",
        )
    ]


def check_public_urls(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """E001: BASE_URL, HOOKS_URL or MCP_URL carries a path, a trailing slash, a query or a fragment.

    Every public URL the service prints is one of these followed by its own
    path; a path or a trailing slash here would make URLs that no route answers.
    """
    errors = []
    for name in PUBLIC_URLS:
        url = getattr(settings, name)
        if problem := url_problem(url):
            errors.append(
                checks.Error(
                    f"{name}={url!r} has {problem}.",
                    hint=f"Set {name} to scheme, host and port only, such as https://app.example.com; "
                    "the service adds every path itself.",
                    id="flowgate.E001",
                )
            )
    return errors


def url_problem(url: str) -> str | None:
    """What besides scheme, host and port a public URL holds ("a trailing slash", "a path"...), or None."""
    parts = urlsplit(url)
    if parts.path == "/":
        return "a trailing slash"
    if parts.path:
        return "a path"
    if parts.query or url.endswith("?"):
        return "a query"
    if parts.fragment or url.endswith("#"):
        return "a fragment"
    return None


def check_pgbouncer(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """E002: PostgreSQL is reached through a PgBouncer older than 1.21 that pools by transaction.

    The webhook intake inserts deliveries with a statement prepared once per
    connection (hooks/statements.py). Before 1.21, PgBouncer pooling by
    transaction runs each transaction on any server connection, where the
    statement was never prepared. PgBouncer cannot be told from PostgreSQL
    over a client connection, so PGBOUNCER_VERSION says it is there.
    """
    version = settings.PGBOUNCER_VERSION
    if not version or version >= PGBOUNCER_PREPARED_STATEMENTS:
        return []
    shown = ".".join(map(str, version))
    return [
        checks.Error(
            f"PGBOUNCER_VERSION={shown}: PgBouncer before 1.21 loses the webhook intake's prepared statements "
            "when it pools by transaction.",
            hint="Upgrade PgBouncer to 1.21 or later and set max_prepared_statements (default 0 before 1.24), "
            "or connect DATABASE_URL to PostgreSQL directly or to a PgBouncer pool in session mode "
            "and leave PGBOUNCER_VERSION empty.",
            id="flowgate.E002",
        )
    ]


def check_visibility_timeout(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """W002: the Redis broker hands out a task again before the run lease of the worker running it ends.

    Claims keep the run single (the second worker finds the run held), but
    every run that goes on longer than the visibility timeout costs a second
    worker a claim attempt, and its message comes back again and again.
    """
    visibility = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}).get("visibility_timeout")
    if visibility is None or visibility > settings.RUN_LEASE_SECONDS:
        return []
    return [
        checks.Warning(
            f"CELERY_VISIBILITY_TIMEOUT={visibility} is not longer than RUN_LEASE_SECONDS="
            f"{settings.RUN_LEASE_SECONDS}: Redis would hand a running run's task to another worker.",
            hint="Set CELERY_VISIBILITY_TIMEOUT above RUN_LEASE_SECONDS (defaults: 3600 and 300).",
            id="flowgate.W002",
        )
    ]


def check_allowed_hosts(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """W003: ALLOWED_HOSTS holds "*", so Django's Host check lets every Host through.

    Routing no longer depends on it (edge/hosts.py: a Host the service does
    not name is a white-label domain or serves nothing), but a request with a
    made-up Host then gets a 404 where it got Django's 400, and a log full of
    scanners' Hosts instead of DisallowedHost lines. White-label domains need
    no entry: they pass the check when their account's row exists.
    """
    if "*" not in settings.ALLOWED_HOSTS:
        return []
    return [
        checks.Warning(
            'ALLOWED_HOSTS contains "*": every Host passes Django\'s Host check.',
            hint="A Host that is not BASE_URL's, HOOKS_URL's, MCP_URL's or a white-label domain still reaches no "
            "page (404 on every path), but list the service's own host names instead (the default when "
            "ALLOWED_HOSTS is unset); white-label domains need no entry.",
            id="flowgate.W003",
        )
    ]


SHARED_HOOKS_HOST = (
    "HOOKS_URL names the same host as BASE_URL or MCP_URL (its default): webhooks are answered by the hooks "
    "process alone (config.asgi), and a web process (config.wsgi) sent one answers 503 and stores nothing."
)


def hooks_host_shared() -> bool:
    from edge.hosts import role_hosts

    return any("hooks" in roles and len(roles) > 1 for roles in role_hosts().values())


def check_hooks_host(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """W004: HOOKS_URL shares its host with BASE_URL or MCP_URL, so a web process may be sent webhooks.

    A warning, not an error: one hooks process serving every host is a
    setup of its own, and a load balancer may send the webhook paths of a
    shared host to the hooks processes.
    """
    if not hooks_host_shared():
        return []
    return [
        checks.Warning(
            SHARED_HOOKS_HOST,
            hint="Serve that host with the hooks process alone (gunicorn config.asgi, the Procfile's hooks line), "
            "or send its /automation-, /webhook/, /webservice-, /connection- and /app- paths to the hooks processes, "
            "or give HOOKS_URL a host of its own (README, Running in production).",
            id="flowgate.W004",
        )
    ]


def check_security_headers(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """W005: edge.headers.SecurityHeadersMiddleware is not right after Django's SecurityMiddleware.

    It stands in for XFrameOptionsMiddleware (whose absence security.W002,
    silenced, would report) and sets the headers SecurityMiddleware would,
    the same ones webhook answers carry (edge/headers.py).
    """
    middleware = list(settings.MIDDLEWARE)
    ours, django = "edge.headers.SecurityHeadersMiddleware", "django.middleware.security.SecurityMiddleware"
    if ours in middleware and django in middleware and middleware.index(ours) == middleware.index(django) + 1:
        return []
    return [
        checks.Warning(
            f"{ours} is not right after {django} in MIDDLEWARE: Django's answers may lack X-Frame-Options, or carry "
            "other security headers than webhook answers.",
            hint=f"List {ours} right after {django}.",
            id="flowgate.W005",
        )
    ]


RENAMED_SETTINGS = {"DELIVERY_LEASE_SECONDS": "RUN_LEASE_SECONDS"}


def check_renamed_settings(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """W006: the environment sets a variable the service no longer reads, under the name it had before.

    Since a delivery is turned into its run in one transaction, only runs are
    leased; a deployment that tuned the old name would otherwise run on the
    new one's default without a word.
    """
    import os

    return [
        checks.Warning(
            f"{old} is set but no longer read: it is now {new}.",
            hint=f"Rename {old} to {new} in the environment.",
            id="flowgate.W006",
        )
        for old, new in RENAMED_SETTINGS.items()
        if old in os.environ
    ]
