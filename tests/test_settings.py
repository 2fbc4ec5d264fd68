"""Settings come from the environment, fail loudly, and fall back to the embedded default."""

import json
import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env

ROOT = Path(__file__).resolve().parent.parent
# Variables of the test run's own environment that the start-ups below must not inherit.
SET_BY_EACH_TEST = ("DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "URL_KEY_SECRET")
PROBE = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps([s.DATABASES['default']['ENGINE'], s.CACHES['default']['BACKEND'], s.CELERY_BROKER_URL, "
    "s.DEBUG]))"
)


def start(extra: dict, tmp_path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in SET_BY_EACH_TEST}
    environment = {**clean, "DJANGO_SETTINGS_MODULE": "config.settings", "FLOWGATE_VAR_DIR": str(tmp_path), **extra}
    return subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=environment, capture_output=True, text=True)


def test_a_missing_secret_key_outside_debug_stops_start_up(tmp_path):
    result = start({}, tmp_path)
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_debug_is_off_unless_asked(tmp_path):
    result = start({"SECRET_KEY": "x" * 50}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("false]")


def test_without_database_and_redis_urls_it_runs_embedded(tmp_path):
    result = start({"DEBUG": "1"}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        '["django.db.backends.sqlite3", "overrides.django_cache.FileCache", "filesystem://localhost//", true]'
    )
    assert (tmp_path / "broker" / "queue").is_dir()


def test_with_urls_it_uses_postgresql_and_redis(tmp_path):
    servers = {"DATABASE_URL": "postgres://u@127.0.0.1/db", "REDIS_URL": "redis://127.0.0.1:6379/3"}
    result = start({"DEBUG": "1", **servers}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        '["django.db.backends.postgresql", "overrides.django_cache.RedisCache", "redis://127.0.0.1:6379/3", true]'
    )


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DEBUG", "maybe", "DEBUG must be a boolean"),
        ("TRUSTED_PROXY_COUNT", "two", "TRUSTED_PROXY_COUNT must be a whole number"),
        ("TRUSTED_PROXY_COUNT", "-1", "TRUSTED_PROXY_COUNT must be at least 0"),
        ("BASE_URL", "app.example.com", "BASE_URL must be an absolute http(s) URL"),
        ("HOOKS_URL", "https://hooks.example.com/path", "HOOKS_URL must name only scheme, host and port"),
        ("FEED_RATE_LIST", "lots", "FEED_RATE_LIST must be a rate such as 300/5m"),
    ],
)
def test_a_malformed_value_names_its_variable(tmp_path, name, value, message):
    result = start({"DEBUG": "1", name: value}, tmp_path)
    assert result.returncode != 0
    assert message in result.stderr


def test_helpers_read_typed_values(monkeypatch):
    monkeypatch.setenv("X_BOOL", "yes")
    monkeypatch.setenv("X_INT", "42")
    monkeypatch.setenv("X_LIST", "a, b,,c")
    monkeypatch.setenv("X_RATE", "10/h")
    assert env.env_bool("X_BOOL") is True
    assert env.env_int("X_INT", 0) == 42
    assert env.env_list("X_LIST") == ["a", "b", "c"]
    assert env.env_rate("X_RATE", "1/s") == "10/h"
    assert env.env_url("X_MISSING", "https://a.example/") == "https://a.example"
    monkeypatch.setenv("X_INT", "4.5")
    with pytest.raises(ImproperlyConfigured, match="X_INT"):
        env.env_int("X_INT", 0)
    monkeypatch.setenv("X_INT", "7200")
    with pytest.raises(ImproperlyConfigured, match="X_INT must be at most 3600"):
        env.env_int("X_INT", 0, maximum=3600)


def test_env_example_lists_every_variable_the_settings_and_the_web_processes_read():
    import re

    sources = [
        ROOT / "config" / "settings.py",
        ROOT / "config" / "asgi.py",
        ROOT / "edge" / "gunicorn.py",
        ROOT / "edge" / "procfile.py",
    ]
    read = {name for source in sources for name in re.findall(r'env_\w+\(\s*"([A-Z_]+)"', source.read_text())}
    read |= set(re.findall(r"\$\{([A-Z_]+):-", (ROOT / "Procfile").read_text()))
    listed = set(re.findall(r"^#?\s*([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert read - listed == set()


def setting(names: str, extra: dict, tmp_path) -> subprocess.CompletedProcess:
    """Start-up with these variables; prints the named settings as JSON."""
    probe = f"import django, json; django.setup(); from django.conf import settings as s; print(json.dumps([{names}]))"
    clean = {k: v for k, v in os.environ.items() if k not in SET_BY_EACH_TEST}
    environment = {**clean, "DJANGO_SETTINGS_MODULE": "config.settings", "FLOWGATE_VAR_DIR": str(tmp_path), **extra}
    return subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=environment, capture_output=True, text=True)


def test_debug_without_a_secret_key_makes_one_secret_per_install_readable_by_its_owner_only(tmp_path):
    first = setting("s.SECRET_KEY, s.URL_KEY_SECRET", {"DEBUG": "1"}, tmp_path / "one")
    again = setting("s.SECRET_KEY, s.URL_KEY_SECRET", {"DEBUG": "1"}, tmp_path / "one")
    other = setting("s.SECRET_KEY, s.URL_KEY_SECRET", {"DEBUG": "1"}, tmp_path / "two")
    assert first.returncode == again.returncode == other.returncode == 0, first.stderr + other.stderr
    secret, url_key_secret = json.loads(first.stdout)
    assert len(secret) >= 50 and "insecure" not in secret and url_key_secret == secret
    assert json.loads(again.stdout) == [secret, secret]
    assert json.loads(other.stdout)[0] != secret
    kept = tmp_path / "one" / "development-secret-key"
    assert kept.read_text().strip() == secret
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert [path.name for path in (tmp_path / "one").iterdir() if "secret" in path.name] == [kept.name]


def test_processes_starting_together_share_one_development_secret(tmp_path):
    starts = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from config.devsecret import development_secret; from pathlib import Path; "
                f"print(development_secret(Path({str(tmp_path / 'var')!r})))",
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    made = {start.communicate()[0].strip() for start in starts}
    assert len(made) == 1 and len(made.pop()) >= 50


@pytest.mark.parametrize(
    ("name", "bind"),
    [
        ("WEB_BIND", "0.0.0.0:8000"),
        ("WEB_BIND", ":8000"),
        ("WEB_BIND", "192.0.2.7:8000"),
        ("WEB_BIND", "example.com:80"),
        ("HOOKS_BIND", "[::]:8001"),
        ("HOOKS_BIND", "0.0.0.0"),
    ],
)
def test_debug_refuses_a_bind_beyond_loopback(tmp_path, name, bind):
    result = setting("s.DEBUG", {"DEBUG": "1", name: bind}, tmp_path)
    assert result.returncode != 0
    assert f"DEBUG is on and {name}={bind} accepts connections from other machines" in result.stderr


@pytest.mark.parametrize(
    "bind", ["127.0.0.1:8000", "127.0.0.2:9000", "[::1]:8000", "localhost:8000", "unix:/tmp/f.sock"]
)
def test_debug_runs_on_a_loopback_bind(tmp_path, bind):
    result = setting("s.DEBUG", {"DEBUG": "1", "WEB_BIND": bind, "HOOKS_BIND": bind}, tmp_path)
    assert result.returncode == 0, result.stderr


def test_a_public_bind_without_debug_is_allowed(tmp_path):
    result = setting("s.DEBUG", {"SECRET_KEY": "x" * 50, "WEB_BIND": "0.0.0.0:8000"}, tmp_path)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("name", "url"), [("BASE_URL", "http://0.0.0.0:8000"), ("HOOKS_URL", "http://[::]:8001")])
def test_a_listen_only_address_is_refused_as_a_public_url(tmp_path, name, url):
    result = setting("s.ALLOWED_HOSTS", {"SECRET_KEY": "x" * 50, name: url}, tmp_path)
    assert result.returncode != 0
    assert f"{name}={url} names" in result.stderr and "an address to listen on" in result.stderr


HTTPS = {"SECRET_KEY": "x" * 50, "BASE_URL": "https://app.example.com", "HOOKS_URL": "https://hooks.example.com"}


def test_https_urls_turn_on_the_ssl_redirect_and_hsts(tmp_path):
    result = setting("s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SECURE_REDIRECT_EXEMPT", HTTPS, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [True, 31536000, ["^healthz$"]]


def test_a_proxy_that_redirects_and_sends_hsts_itself_turns_them_off(tmp_path):
    extra = {**HTTPS, "SECURE_SSL_REDIRECT": "0", "SECURE_HSTS_SECONDS": "0"}
    result = setting("s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS", extra, tmp_path)
    assert json.loads(result.stdout) == [False, 0]


def test_http_urls_are_neither_redirected_nor_pinned(tmp_path):
    result = setting("s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS", {"SECRET_KEY": "x" * 50}, tmp_path)
    assert json.loads(result.stdout) == [False, 0]
    mixed = setting(
        "s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS", {**HTTPS, "HOOKS_URL": "http://hooks.example.com"}, tmp_path
    )
    assert json.loads(mixed.stdout) == [False, 31536000]  # redirecting would send the http hooks host to https


def deploy_check(extra: dict, tmp_path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in SET_BY_EACH_TEST}
    environment = {**clean, "DJANGO_SETTINGS_MODULE": "config.settings", "FLOWGATE_VAR_DIR": str(tmp_path), **extra}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, env=environment, capture_output=True, text=True
    )


def test_check_deploy_with_https_urls_finds_hsts_and_the_ssl_redirect(tmp_path):
    real_secret = {"SECRET_KEY": secrets.token_urlsafe(50), "MCP_URL": "https://mcp.example.com"}
    result = deploy_check({**HTTPS, **real_secret}, tmp_path)
    assert result.returncode == 0, result.stderr
    for warning in ("security.W004", "security.W008", "security.W009", "security.W012", "security.W016"):
        assert warning not in result.stdout + result.stderr
    behind_a_proxy = {**HTTPS, **real_secret, "SECURE_SSL_REDIRECT": "0", "SECURE_HSTS_SECONDS": "0"}
    turned_off = deploy_check(behind_a_proxy, tmp_path)
    assert "security.W004" in turned_off.stdout + turned_off.stderr
    assert "security.W008" in turned_off.stdout + turned_off.stderr


@pytest.mark.parametrize(
    ("url", "worker", "own"),
    [
        ("redis://127.0.0.1:6379/1", 0, "redis://127.0.0.1:6379/1"),
        ("redis://127.0.0.1:6379/1", 1, "redis://127.0.0.1:6379/2"),
        ("redis://:pw@cache:6379", 1, "redis://:pw@cache:6379/1"),
        ("redis://127.0.0.1:6379/15?socket_timeout=1", 1, "redis://127.0.0.1:6379/0?socket_timeout=1"),
    ],
)
def test_each_test_process_gets_the_next_redis_database(url, worker, own):
    from config.test_settings import _own_redis_database

    assert _own_redis_database(url, worker) == own


def test_a_command_without_a_secret_key_says_what_to_set_in_one_line(tmp_path):
    result = deploy_check({}, tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("manage.py: SECRET_KEY is not set") and "Traceback" not in result.stderr


def test_cookies_are_secure_on_https_never_readable_by_scripts_and_never_sent_by_other_sites_posts(tmp_path):
    names = (
        "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, s.SESSION_COOKIE_SAMESITE, "
        "s.CSRF_COOKIE_SAMESITE, s.SESSION_COOKIE_DOMAIN, s.CSRF_COOKIE_DOMAIN"
    )
    secret = {
        "SECRET_KEY": "a-long-enough-secret-key-for-the-settings-to-start-with-it-0123456789",
        "CONNECTION_KEYS": "dGVzdC1vbmx5LWNvbm5lY3Rpb24ta2V5LTAwMDAwMDA=",
    }
    https = setting(names, {**secret, "BASE_URL": "https://app.example.com"}, tmp_path / "https")
    http = setting(names, {"DEBUG": "1", "BASE_URL": "http://127.0.0.1:8000"}, tmp_path / "http")
    assert https.returncode == http.returncode == 0, https.stderr + http.stderr
    # Host-only cookies (no Domain): a sibling host under the same parent never gets them.
    assert json.loads(https.stdout) == [True, True, True, "Lax", "Lax", None, None]
    assert json.loads(http.stdout)[:2] == [False, False]  # a development server on plain http still signs in


def test_missing_connection_keys_outside_debug_stop_start_up(tmp_path):
    clean = {k: v for k, v in os.environ.items() if k != "CONNECTION_KEYS"}
    environment = {**clean, "DJANGO_SETTINGS_MODULE": "config.settings", "FLOWGATE_VAR_DIR": str(tmp_path)}
    environment.update({"SECRET_KEY": "x" * 50, "DEBUG": "0"})
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=environment, capture_output=True, text=True)
    assert result.returncode != 0
    assert "CONNECTION_KEYS is not set" in result.stderr


def test_with_debug_on_connection_keys_default_to_one_derived_from_the_secret(tmp_path):
    clean = {k: v for k, v in os.environ.items() if k not in (*SET_BY_EACH_TEST, "CONNECTION_KEYS")}
    environment = {**clean, "DJANGO_SETTINGS_MODULE": "config.settings", "FLOWGATE_VAR_DIR": str(tmp_path)}
    probe = "import django; django.setup(); from django.conf import settings as s; print(len(s.CONNECTION_KEYS))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env={**environment, "DEBUG": "1"}, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"


@pytest.mark.parametrize("value", ["not-a-key", "c2hvcnQ=", "dGVzdC1vbmx5LWNvbm5lY3Rpb24ta2V5LTAwMDAwMDA=,nope"])
def test_a_connection_key_that_is_no_fernet_key_is_refused_with_its_name(monkeypatch, value):
    monkeypatch.setenv("CONNECTION_KEYS", value)
    with pytest.raises(ImproperlyConfigured, match="CONNECTION_KEYS: key"):
        env.env_fernet_keys("CONNECTION_KEYS")
