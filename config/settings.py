"""Flowgate settings, every value read from the environment in this one module.

`.env.example` lists every variable. With neither DATABASE_URL nor REDIS_URL
set, the service runs on an embedded default (SQLite, a file-system Celery
broker and a file cache) so it starts on a machine that has only Python.
"""

from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from config.devsecret import development_secret
from config.env import (
    env_bool,
    env_fernet_keys,
    env_int,
    env_list,
    env_rate,
    env_str,
    env_url,
    env_version,
    request_body_timeout,
    web_service_timeout,
)
from config.startup_checks import connection_keys, refuse_debug_beyond_loopback, refuse_listen_only_host

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("FLOWGATE_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
if DEBUG:
    # The addresses the web and hooks processes listen on (edge/gunicorn.py, the Procfile).
    refuse_debug_beyond_loopback("WEB_BIND", env_str("WEB_BIND", "127.0.0.1:8000"))
    refuse_debug_beyond_loopback("HOOKS_BIND", env_str("HOOKS_BIND", "127.0.0.1:8001"))

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY to a long random string "
            "(python -c 'import secrets; print(secrets.token_urlsafe(50))'), "
            "or set DEBUG=1 for local development."
        )
    SECRET_KEY = development_secret(VAR_DIR)

# The three public hosts (DESIGN.md "One project, three hosts").
BASE_URL = env_url("BASE_URL", "http://127.0.0.1:8000")  # where `make run` serves
HOOKS_URL = env_url("HOOKS_URL", BASE_URL)
MCP_URL = env_url("MCP_URL", BASE_URL)
for _name, _url in (("BASE_URL", BASE_URL), ("HOOKS_URL", HOOKS_URL), ("MCP_URL", MCP_URL)):
    refuse_listen_only_host(_name, _url)

ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS",
    sorted({urlsplit(url).hostname for url in (BASE_URL, HOOKS_URL, MCP_URL)}),
)
CSRF_TRUSTED_ORIGINS = [BASE_URL]
# Django's 403 page on the service's hosts; on a white-label domain, that account's (interfaces/whitelabel/errors.py).
CSRF_FAILURE_VIEW = "interfaces.whitelabel.errors.csrf_failure"

# How many reverse proxies in front of the service append to X-Forwarded-For.
# 0 means the client address is REMOTE_ADDR: the header is spoofable and is
# never read unless an operator says how many proxies to trust.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0)
if TRUSTED_PROXY_COUNT:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    USE_X_FORWARDED_HOST = env_bool("USE_X_FORWARDED_HOST", False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "config",  # system checks of the settings (config/checks.py)
    "catalog",
    "publickeys",
    "automations",
    "hooks",
    "interfaces",
    "connections",
    "accounts",
    "oauth2_provider",
    "mcp_auth",
]

MIDDLEWARE = [
    # First: a token in a URL is revoked whatever answers the request (a redirect, a 404, /mcp's 400).
    "mcp_server.exposed_tokens.RevokeTokensInUrlsMiddleware",
    # Accounts' white-label domains, added in admin, pass the Host check without a restart (edge/hosts.py).
    "interfaces.whitelabel.domains.WhiteLabelHostMiddleware",
    # Django's for its https redirect and deploy checks; the headers of every answer from edge/headers.py.
    "django.middleware.security.SecurityMiddleware",
    "edge.headers.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "edge.hosts.HostRoutingMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After host routing: the language of pages from Accept-Language (edge/locale.py).
    "edge.locale.PageLocaleMiddleware",
    # A 304 without Content-Length, which CommonMiddleware (next) would add (edge/not_modified.py).
    "edge.not_modified.NoLengthOnNotModifiedMiddleware",
    "django.middleware.common.CommonMiddleware",
    # A chunked body gets 411 where Django would read it as none (edge/length_required.py).
    "edge.length_required.LengthRequiredMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A NUL in an admin page's query parameters gets 400 before a list filter sends it to the database.
    "edge.admin_queries.AdminNulQueryMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A view that finds the database out of reach answers 503 with Retry-After, logged once per outage.
    "edge.outage_middleware.DatabaseOutageMiddleware",
    # Content-Security-Policy of HTML pages; a framed page says so with page_headers.framed_by.
    "edge.page_headers.ContentSecurityPolicyMiddleware",
]

# Paths whose answers are never pages (the catalog feed, the health check) skip the middleware only pages need
# (sessions, sign-in, CSRF, messages, the page's language) and static files' (edge/handler.py): about 150 us of
# CPU a request, a third of a feed detail's (benchmarks/RESULTS.md, "Catalog feed").
LEAN_PATH_PREFIXES = ("/catalog/v1/", "/healthz")
LEAN_PATHS_SKIP_MIDDLEWARE = (
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "edge.locale.PageLocaleMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "edge.admin_queries.AdminNulQueryMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
)

# The JSON endpoints' errors in one shape (edge/errors.py).
REST_FRAMEWORK = {"EXCEPTION_HANDLER": "edge.errors.exception_handler"}

ROOT_URLCONF = "config.urls.combined"
# Public API paths have no trailing slash; redirecting them would hide typos.
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # On a white-label domain, its account's name and logo instead of the service's (templates/base.html).
                "interfaces.whitelabel.context.brand",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

DATABASE_URL = env_str("DATABASE_URL")
REDIS_URL = env_str("REDIS_URL")
EMBEDDED = not DATABASE_URL and not REDIS_URL

if DATABASE_URL:
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL,
            # Persistent connections: a new PostgreSQL connection per request
            # costs more than the whole feed response.
            conn_max_age=env_int("DB_CONN_MAX_AGE", 600, minimum=0),
            conn_health_checks=True,
        )
    }
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "flowgate.sqlite3",
            "OPTIONS": {
                # Web, worker and beat share the file: WAL lets readers run
                # beside one writer, IMMEDIATE avoids upgrade deadlocks.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The release of PgBouncer that DATABASE_URL reaches when it pools by transaction, such as 1.21.0; empty for a
# direct connection or session pooling. The webhook intake prepares statements: check flowgate.E002 refuses
# releases before 1.21, which lose them (config/checks.py).
PGBOUNCER_VERSION = env_version("PGBOUNCER_VERSION")

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "overrides.django_cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "flowgate",
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "overrides.django_cache.FileCache",
            "LOCATION": str(VAR_DIR / "cache"),
            "KEY_PREFIX": "flowgate",
        }
    }

# The embedded file cache is shared by all processes of one machine. Its counters keep their expiry and lose no
# count (overrides/django_cache.py), but every count is a file written: production sets REDIS_URL.

# Pages that need an account send signed-out visitors to /login?next=<the page> (docs/interfaces.md "Sign-in").
LOGIN_URL = "login"
# Accounts sign in with their email address, matched without regard to case (docs/accounts.md).
AUTHENTICATION_BACKENDS = ["accounts.backends.EmailBackend"]
# Anyone may make an account at /signup, confirmed by an emailed link; off, the page says to ask an administrator.
SIGNUP_OPEN = env_bool("SIGNUP_OPEN", False)
# Mails that sign-up, its confirmation resend and password reset send, per client IP and per address (edge/limits.py).
ACCOUNT_MAIL_RATE_IP = env_rate("ACCOUNT_MAIL_RATE_IP", "20/h")
ACCOUNT_MAIL_RATE_ADDRESS = env_rate("ACCOUNT_MAIL_RATE_ADDRESS", "5/h")
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Django's default hashers for people's passwords, and a fast one for OAuth client secrets (mcp_auth/hashers.py).
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
    "mcp_auth.hashers.ClientSecretHasher",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Pages are written in English and translated into German (locale/, compiled .mo files committed);
# each visitor gets the one their browser's Accept-Language prefers (docs/interfaces.md).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

SESSION_COOKIE_SECURE = BASE_URL.startswith("https://")
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# Every page refuses to be framed unless its view says otherwise (edge/page_headers.py framed_by).
X_FRAME_OPTIONS = "DENY"
# edge/headers.py sets X-Frame-Options in place of XFrameOptionsMiddleware, whose absence security.W002 reports.
SILENCED_SYSTEM_CHECKS = ["security.W002"]
SECURE_CONTENT_TYPE_NOSNIFF = True
# With https URLs, plain http is redirected and browsers are told to keep to https; a proxy in front
# that does both itself lets them be turned off. Redirecting is off when any URL is http: that host
# would be sent to https. Load balancers probe /healthz over plain http.
SECURE_SSL_REDIRECT = env_bool(
    "SECURE_SSL_REDIRECT", all(url.startswith("https://") for url in (BASE_URL, HOOKS_URL, MCP_URL))
)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 24 * 3600 if SESSION_COOKIE_SECURE else 0, minimum=0)
# Masks the passwords inside DATABASE_URL, REDIS_URL and the like, URL keys and OAuth credentials in URLs, on error
# pages and in error mails.
DEFAULT_EXCEPTION_REPORTER_FILTER = "edge.error_reports.ExceptionReporterFilter"
DEFAULT_EXCEPTION_REPORTER = "edge.error_reports.ExceptionReporter"

# --- Catalog feed (SPEC 4.1, 8) -------------------------------------------
CATALOG_RETIREMENT_DAYS = env_int("CATALOG_RETIREMENT_DAYS", 180, minimum=0)
FEED_RATE_LIST = env_rate("FEED_RATE_LIST", "300/5m")
FEED_RATE_LOGO = env_rate("FEED_RATE_LOGO", "1000/5m")
FEED_RATE_BULK = env_rate("FEED_RATE_BULK", "10/h")
RATELIMIT_ENABLE = env_bool("RATELIMIT_ENABLE", True)
# Password attempts at admin's sign-in, per client IP and per user name (accounts/sign_in.py).
SIGN_IN_RATE_IP = env_rate("SIGN_IN_RATE_IP", "30/15m")
SIGN_IN_RATE_USERNAME = env_rate("SIGN_IN_RATE_USERNAME", "10/15m")
# Requests to approval links (/moderation), pages and decisions alike, per client IP (edge/limits.py).
APPROVAL_RATE_IP = env_rate("APPROVAL_RATE_IP", "120/m")
# How often a web process asks whether a newer feed was built. Bodies are
# served from process memory between checks.
FEED_VERSION_CHECK_SECONDS = env_int("FEED_VERSION_CHECK_SECONDS", 1, minimum=0)
# Daily bulk rebuild time, UTC.
CATALOG_BULK_HOUR = env_int("CATALOG_BULK_HOUR", 4, minimum=0)
CATALOG_BULK_MINUTE = env_int("CATALOG_BULK_MINUTE", 0, minimum=0)

# --- Automations, webhook and web service URLs (SPEC 4.2, 6, 7.2, 7.3, 8) --
# Keys of public URLs are looked up by their HMAC and kept encrypted under
# this secret; changing it retires every issued URL (publickeys/crypto.py).
URL_KEY_SECRET = env_str("URL_KEY_SECRET") or SECRET_KEY
# Fernet keys sealing owners' credentials on other apps, newest first: the first seals, any opens. Rotation:
# put a new key first, run manage.py rotate_connection_keys, then drop the old one (docs/connections.md).
CONNECTION_KEYS = connection_keys(env_fernet_keys("CONNECTION_KEYS"), debug=DEBUG, secret_key=SECRET_KEY)
# The call that checks a pasted key (the app's auth_config "test_request") ends within this many seconds.
CONNECTION_CHECK_TIMEOUT_SECONDS = env_int("CONNECTION_CHECK_TIMEOUT_SECONDS", 10, minimum=1, maximum=60)
# Bodies larger than this get 413 before they are read.
HOOK_MAX_BODY_BYTES = env_int("HOOK_MAX_BODY_BYTES", 32 * 1024 * 1024, minimum=1)
# A request body not complete this long after its request arrived is cut off
# (408 on webhook and web service URLs), so slow senders cannot hold every
# thread of a process (edge/bodies.py).
REQUEST_BODY_TIMEOUT_SECONDS = request_body_timeout()
# Webhook and web service URLs answer 503 (also switchable in admin).
MAINTENANCE_MODE = env_bool("MAINTENANCE_MODE", False)
HOOK_SUPPRESSION_SECONDS = env_int("HOOK_SUPPRESSION_SECONDS", 600, minimum=0)
# A worker holds a run this long; past it, the run is presumed lost with its
# worker and given back to waiting for another. It bounds the longest run.
RUN_LEASE_SECONDS = env_int("RUN_LEASE_SECONDS", 300, minimum=5)
# How often the one sweeper (automations/runs.py) looks for waiting runs whose time has come, for runs whose
# worker was lost, and for deliveries no task holds. A delay ending within this much of a sweep is queued for
# its exact time.
RUN_SWEEP_SECONDS = env_int("RUN_SWEEP_SECONDS", 15, minimum=1)
# A delivery still pending this long after it was accepted (its message lost with a broker) is queued again by
# the sweeper; younger ones are left to the message the intake sent.
DELIVERY_SWEEP_SECONDS = env_int("DELIVERY_SWEEP_SECONDS", 30, minimum=1)
# How often webhooks registered in other apps that no automation needs are removed, and failed removals tried
# again (connections/registrations.py); a failed removal waits REGISTRATION_RETRY_SECONDS, doubled at each
# failure up to a day.
REGISTRATION_CLEANUP_SECONDS = env_int("REGISTRATION_CLEANUP_SECONDS", 3600, minimum=1)
REGISTRATION_RETRY_SECONDS = env_int("REGISTRATION_RETRY_SECONDS", 300, minimum=1)
WEB_SERVICE_MONTHLY_QUOTA = env_int("WEB_SERVICE_MONTHLY_QUOTA", 10000, minimum=0)
WEB_SERVICE_TIMEOUT_SECONDS = web_service_timeout()
HTTP_STEP_TIMEOUT_SECONDS = env_int("HTTP_STEP_TIMEOUT_SECONDS", 30, minimum=1)
# HTTP request steps may not call loopback, private or link-local addresses
# unless this is on (tests, or a single-tenant install inside a network).
HTTP_STEP_ALLOW_PRIVATE = env_bool("HTTP_STEP_ALLOW_PRIVATE", False)

# --- Forms (SPEC 4.3; docs/interfaces.md "Forms") -------------------------
# Files sent through forms are kept with Django's storage API (STORAGES["default"]), on local disk here.
MEDIA_ROOT = env_str("FORM_UPLOADS_DIR", str(VAR_DIR / "uploads"))
# A form sent back sooner than this after it was shown is refused as a robot's (the visitor sends it again).
FORM_MIN_FILL_SECONDS = env_int("FORM_MIN_FILL_SECONDS", 2, minimum=0)
# Submissions per client IP on each form and per form; a form's own `limits` replace them.
FORM_RATE_IP = env_rate("FORM_RATE_IP", "20/10m")
FORM_RATE_FORM = env_rate("FORM_RATE_FORM", "600/h")
# The largest file a form field may accept (a field's max_bytes is capped by it).
FORM_FILE_MAX_BYTES = env_int("FORM_FILE_MAX_BYTES", 10 * 1024 * 1024, minimum=1)
# Who sends the one-time form links a form step emails.
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "flowgate@localhost")
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
# Where django.core.mail.backends.filebased.EmailBackend writes each mail as a file.
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
# The SMTP server of django.core.mail.backends.smtp.EmailBackend. A timeout, so that a mail server that stops
# answering fails the step instead of holding a worker until its lease runs out (Django's default waits forever).
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30, minimum=1)

# --- Chat widget (SPEC 4.3; docs/interfaces.md "Chat widget") --------------
# Visitor messages allowed per conversation, per widget and per visitor address (a widget's trigger may
# set lower or higher ones); past one the message gets 429.
CHAT_RATE_CONVERSATION = env_rate("CHAT_RATE_CONVERSATION", "20/m")
CHAT_RATE_WIDGET = env_rate("CHAT_RATE_WIDGET", "600/m")
CHAT_RATE_IP = env_rate("CHAT_RATE_IP", "60/m")
# Loads of widget pages per visitor address, all widgets together: each load issues a conversation token.
CHAT_RATE_PAGE_IP = env_rate("CHAT_RATE_PAGE_IP", "60/m")
# Longest visitor message, in characters; and the largest request body that carries one, in bytes (413 above).
CHAT_MESSAGE_MAX_CHARS = env_int("CHAT_MESSAGE_MAX_CHARS", 2000, minimum=1)
CHAT_MAX_BODY_BYTES = env_int("CHAT_MAX_BODY_BYTES", 16384, minimum=256)
# How long a conversation token (and so a visitor's conversation) lasts after its widget page was first opened.
CHAT_TOKEN_MAX_AGE_SECONDS = env_int("CHAT_TOKEN_MAX_AGE_SECONDS", 30 * 86400, minimum=60)

# --- OAuth 2.1 server for MCP clients (django-oauth-toolkit; mcp_auth/) ------
# The scopes an MCP client may ask for; "MCP Tools" is also a Django permission
# (mcp_auth.use_mcp_tools) that staff grant to the users who may approve a client.
MCP_SCOPES = {
    "mcp:tools": "Run and inspect your automations",
    "mcp:automation_builder": "Create and change your automations",
}
OAUTH2_PROVIDER = {
    "SCOPES": MCP_SCOPES,
    "DEFAULT_SCOPES": ["mcp:tools"],
    # Drops "offline_access" from a scope request (accepted and ignored) before the scopes are checked.
    "OAUTH2_VALIDATOR_CLASS": "mcp_auth.validator.McpValidator",
    # The code and refresh grants alone (what the metadata lists): oauthlib's default server also takes the
    # password grant, whose two errors told a right password from a wrong one to anyone who registered a client.
    "OAUTH2_SERVER_CLASS": "oauthlib.oauth2.WebApplicationServer",
    # Client secrets are long random strings: one salted SHA-256 instead of PBKDF2 (mcp_auth/hashers.py).
    "CLIENT_SECRET_HASHER": "client_secret_sha256",
    "PKCE_REQUIRED": True,
    # "plain" PKCE is refused (S256 only); mcp_auth/authorization.py refuses it before the consent page too.
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    # Tokens are passwords: only their SHA-256 is stored, the token column stays empty (docs/mcp.md).
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    # A bearer token is read from the Authorization header only, never from a URL's query string.
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    # Native clients listen on http://localhost:<any port> as on 127.0.0.1 and [::1] (RFC 8252 7.3).
    "ALLOW_LOCALHOST_LOOPBACK": True,
    # An access token lives an hour at most (issue 16); a refresh token a finite time.
    "ACCESS_TOKEN_EXPIRE_SECONDS": env_int("OAUTH_ACCESS_TOKEN_SECONDS", 3600, minimum=60, maximum=3600),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env_int("OAUTH_REFRESH_TOKEN_SECONDS", 30 * 86400, minimum=3600),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    # No grace: a refresh token used twice, even by two requests at once, is reuse (mcp_auth/validator.py).
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
}
# django-oauth-toolkit's own client model, not swapped; named because migrations of models pointing at it
# (mcp_auth.RegisteredClient) resolve it through this setting.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
# Client registrations (POST {base_url}/oauth/client) per client IP (edge/limits.py).
OAUTH_REGISTRATION_RATE_IP = env_rate("OAUTH_REGISTRATION_RATE_IP", "20/h")
# A registered client that has not obtained a token this long after registering is deleted by beat.
OAUTH_UNUSED_CLIENT_SECONDS = env_int("OAUTH_UNUSED_CLIENT_SECONDS", 86400, minimum=60)
# Browser origins allowed to call {MCP_URL}/mcp (DNS-rebinding protection): a request with an Origin header
# not listed here gets 403. Requests without Origin (agents, the SDK's client) are not browsers and pass.
# A web process remembers a valid access token this long (the token check is a query per MCP request): a
# withdrawn "MCP Tools" permission takes effect within it; a revocation at once, every process reading its mark in
# the shared cache (mcp_auth/revocations.py). 0: every request asks the database.
MCP_TOKEN_CHECK_SECONDS = env_int("MCP_TOKEN_CHECK_SECONDS", 2, minimum=0, maximum=60)
MCP_ALLOWED_ORIGINS = [origin.rstrip("/") for origin in env_list("MCP_ALLOWED_ORIGINS", [MCP_URL])]

# --- Celery ---------------------------------------------------------------
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    if REDIS_URL.startswith("redis://"):  # TLS (rediss://) and sockets keep kombu's own
        CELERY_BROKER_TRANSPORT = "overrides.kombu_redis_client:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Redis redelivers a message that was taken but not acknowledged after
        # this many seconds. It must exceed the longest task (and any
        # countdown), or a slow task would be handed to a second worker.
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=60),
    }
else:
    # Server-less broker for the embedded default: messages are files that
    # web, worker and beat on this one machine exchange through a folder.
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    # With a host: kombu warns "No hostname was supplied" at every connection without one.
    CELERY_BROKER_URL = "filesystem://localhost//"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
CELERY_TIMEZONE = "UTC"
CELERY_ENABLE_UTC = True
# A task is acknowledged only when it has finished, so a worker that dies
# mid-task leaves the message to be delivered again...
CELERY_TASK_ACKS_LATE = True
# ...including when the child process is killed (SIGKILL, out of memory):
# without this, Celery acknowledges the lost task as failed.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# With late acks each prefetched message is one more that a crash delays;
# one at a time keeps redelivery prompt and work evenly spread.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Results live in the database rows the tasks write; no result backend.
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery closes a worker's database connections around every task unless this
# is set, so each task would pay for a new PostgreSQL connection, which slows
# the drain of a backlog (benchmarks/RESULTS.md). With it set,
# Celery closes them only every this many tasks; in between, config/celery.py
# gives tasks the lifecycle Django gives requests (DB_CONN_MAX_AGE, health
# checks).
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Makes VAR_DIR when beat starts, in every configuration (config/beat.py).
CELERY_BEAT_SCHEDULER = "config.beat:Scheduler"
CELERY_BEAT_SCHEDULE = {
    "catalog-build-bulk": {
        "task": "catalog.build_bulk",
        "schedule": crontab(hour=CATALOG_BULK_HOUR, minute=CATALOG_BULK_MINUTE),
    },
    "catalog-expire-retired": {
        "task": "catalog.expire_retired_apps",
        "schedule": crontab(minute=7),
    },
    # Edits enqueue a rebuild on commit; this catches any edit made where no
    # worker was listening (a shell, a restored dump).
    "catalog-rebuild-feed": {
        "task": "catalog.rebuild_feed",
        "schedule": crontab(minute="*/15"),
    },
    # DESIGN.md contracts 1 and 5, the one sweeper: waiting runs go on when their time comes, runs whose worker
    # was lost go back to waiting, and accepted deliveries whose task was lost run anyway.
    "automations-sweep-runs": {
        "task": "automations.sweep_runs",
        "schedule": RUN_SWEEP_SECONDS,
    },
    # Webhooks registered in other apps that no automation needs, and removals that failed, tried again with
    # backoff (connections/registrations.py).
    "connections-clean-registrations": {
        "task": "connections.clean_registrations",
        "schedule": REGISTRATION_CLEANUP_SECONDS,
    },
    # Registered OAuth clients that never obtained a token (docs/mcp.md "Client registration").
    "mcp-auth-purge-unused-clients": {
        "task": "mcp_auth.purge_unused_clients",
        "schedule": crontab(minute=23),
    },
    # Expired OAuth grants and tokens, and spent authorization codes (mcp_auth/tasks.py).
    "mcp-auth-clear-expired": {
        "task": "mcp_auth.clear_expired",
        "schedule": crontab(minute=41),
    },
}

LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # No log line carries a URL key in clear (edge/logs.py); every handler here takes the filter.
    "filters": {"redact_keys": {"()": "edge.logs.RedactKeys"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["redact_keys"]}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
        # 4xx answers of public URLs are normal traffic, not warnings; 5xx still log.
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "django.db.backends": {"level": "WARNING"},
        # httpx logs every request URL at INFO, and URLs in HTTP request steps may carry secrets.
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}
