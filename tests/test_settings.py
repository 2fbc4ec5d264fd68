"""Settings come from the environment, fail loudly, and fall back to the embedded default."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env

ROOT = Path(__file__).resolve().parent.parent
PROBE = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps([s.DATABASES['default']['ENGINE'], s.CACHES['default']['BACKEND'], s.CELERY_BROKER_URL, s.DEBUG]))"
)


def start(extra: dict, tmp_path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY")}
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
        '["django.db.backends.sqlite3", "django.core.cache.backends.filebased.FileBasedCache", "filesystem://", true]'
    )
    assert (tmp_path / "broker" / "queue").is_dir()


def test_with_urls_it_uses_postgresql_and_redis(tmp_path):
    result = start({"DEBUG": "1", "DATABASE_URL": "postgres://u@127.0.0.1/db", "REDIS_URL": "redis://127.0.0.1:6379/3"}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        '["django.db.backends.postgresql", "config.cache.RedisCache", "redis://127.0.0.1:6379/3", true]'
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


def test_env_example_lists_every_variable_the_settings_and_the_web_processes_read():
    import re

    sources = (ROOT / "config" / "settings.py", ROOT / "config" / "gunicorn.py", ROOT / "config" / "asgi.py")
    read = {name for source in sources for name in re.findall(r'env_\w+\(\s*"([A-Z_]+)"', source.read_text())}
    read |= set(re.findall(r"\$\{([A-Z_]+):-", (ROOT / "Procfile").read_text()))
    listed = set(re.findall(r"^#?\s*([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert read - listed == set()
