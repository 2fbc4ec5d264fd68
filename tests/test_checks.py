"""System checks flag settings that start-up accepts but a deployment would regret, each under a stable id."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core import checks

from config.checks import (
    check_allowed_hosts,
    check_hooks_host,
    check_pgbouncer,
    check_public_urls,
    check_renamed_settings,
    check_security_headers,
    check_url_key_secret,
    check_visibility_timeout,
)

ROOT = Path(__file__).resolve().parent.parent


def flowgate_ids() -> list[str]:
    """The ids the registered checks report, as `manage.py check --tag flowgate` would."""
    return sorted(message.id for message in checks.run_checks(tags=["flowgate"]))


@pytest.fixture(autouse=True)
def hooks_host_of_its_own(settings):
    """The tests serve every host from one, as one hooks process would (check W004); a deployment gives HOOKS_URL
    a host of its own."""
    settings.HOOKS_URL = "http://hooks.testserver"


def test_the_test_settings_pass_every_check():
    assert flowgate_ids() == []


def test_a_hooks_url_sharing_a_host_with_a_page_host_is_a_warning(settings):
    settings.HOOKS_URL = settings.BASE_URL
    assert [warning.id for warning in check_hooks_host()] == ["flowgate.W004"]
    settings.HOOKS_URL = "http://hooks.testserver"
    assert check_hooks_host() == []


def test_the_security_headers_middleware_out_of_its_place_is_a_warning(settings):
    assert check_security_headers() == []
    ours = "edge.headers.SecurityHeadersMiddleware"
    settings.MIDDLEWARE = [name for name in settings.MIDDLEWARE if name != ours] + [ours]
    assert [warning.id for warning in check_security_headers()] == ["flowgate.W005"]
    settings.MIDDLEWARE = [name for name in settings.MIDDLEWARE if name != ours]
    assert [warning.id for warning in check_security_headers()] == ["flowgate.W005"]


def test_a_url_key_secret_left_to_its_default_is_a_warning(settings):
    settings.URL_KEY_SECRET = settings.SECRET_KEY
    [warning] = check_url_key_secret()
    assert (warning.id, warning.level) == ("flowgate.W001", checks.WARNING)
    assert "Set URL_KEY_SECRET to the current SECRET_KEY" in warning.hint
    assert flowgate_ids() == ["flowgate.W001"]


def test_a_url_key_secret_of_its_own_passes(settings):
    settings.URL_KEY_SECRET = "another-secret"
    assert check_url_key_secret() == []


def test_a_url_key_secret_equal_to_the_development_secret_is_no_warning_with_debug_on(settings):
    settings.DEBUG = True
    settings.URL_KEY_SECRET = settings.SECRET_KEY
    assert check_url_key_secret() == []


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("https://app.example.com/", "a trailing slash"),
        ("https://app.example.com/flowgate", "a path"),
        ("https://app.example.com/flowgate/", "a path"),
        ("https://app.example.com?x=1", "a query"),
        ("https://app.example.com#top", "a fragment"),
    ],
)
@pytest.mark.parametrize("name", ["BASE_URL", "HOOKS_URL", "MCP_URL"])
def test_a_public_url_with_more_than_scheme_host_and_port_is_an_error(settings, name, value, problem):
    setattr(settings, name, value)
    [error] = check_public_urls()
    assert (error.id, error.level) == ("flowgate.E001", checks.ERROR)
    assert error.msg == f"{name}={value!r} has {problem}."
    assert error.hint.startswith(f"Set {name} to scheme, host and port only")
    assert flowgate_ids() == ["flowgate.E001"]


def test_public_urls_with_a_port_pass(settings):
    settings.BASE_URL, settings.HOOKS_URL, settings.MCP_URL = (
        "https://app.example.com",
        "http://127.0.0.1:8001",
        "https://[2001:db8::1]:8443",
    )
    assert check_public_urls() == []


@pytest.mark.parametrize("version", [(1, 20, 1), (1, 9), (1, 20)])
def test_pgbouncer_before_1_21_is_an_error(settings, version):
    settings.PGBOUNCER_VERSION = version
    [error] = check_pgbouncer()
    assert (error.id, error.level) == ("flowgate.E002", checks.ERROR)
    assert error.msg.startswith(f"PGBOUNCER_VERSION={'.'.join(map(str, version))}: PgBouncer before 1.21")
    assert "max_prepared_statements" in error.hint


@pytest.mark.parametrize("version", [(), (1, 21), (1, 21, 0), (1, 24, 1), (2,)])
def test_pgbouncer_from_1_21_or_none_passes(settings, version):
    settings.PGBOUNCER_VERSION = version
    assert check_pgbouncer() == []


@pytest.mark.parametrize(
    ("visibility", "lease", "warned"), [(300, 300, True), (60, 300, True), (3600, 300, False), (3600, 7200, True)]
)
def test_a_broker_visibility_timeout_within_the_run_lease_is_a_warning(settings, visibility, lease, warned):
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": visibility}
    settings.RUN_LEASE_SECONDS = lease
    found = check_visibility_timeout()
    assert [(message.id, message.level) for message in found] == ([("flowgate.W002", checks.WARNING)] if warned else [])


def test_no_visibility_timeout_to_check_on_the_embedded_broker(settings):
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    assert check_visibility_timeout() == []


@pytest.mark.parametrize("allowed", [["*"], ["app.example.com", "*"]])
def test_allowed_hosts_of_any_host_is_a_warning(settings, allowed):
    settings.ALLOWED_HOSTS = allowed
    [warning] = check_allowed_hosts()
    assert (warning.id, warning.level) == ("flowgate.W003", checks.WARNING)
    assert "white-label domains need no entry" in warning.hint
    assert flowgate_ids() == ["flowgate.W003"]


def test_allowed_hosts_naming_hosts_passes(settings):
    settings.ALLOWED_HOSTS = ["app.example.com", ".example.org"]
    assert check_allowed_hosts() == []


def manage_check(environment: dict, tmp_path) -> subprocess.CompletedProcess:
    kept = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DEBUG", "URL_KEY_SECRET")}
    environment = {
        **kept,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "FLOWGATE_VAR_DIR": str(tmp_path),
        "SECRET_KEY": "s" * 50,
        **environment,
    }
    command = [sys.executable, "manage.py", "check", "--tag", "flowgate"]
    return subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True)


def test_manage_check_stops_on_an_old_pgbouncer_named_in_the_environment(tmp_path):
    result = manage_check(
        {"DATABASE_URL": "postgres://u@127.0.0.1/db", "PGBOUNCER_VERSION": "1.20.1", "URL_KEY_SECRET": "u" * 50},
        tmp_path,
    )
    assert result.returncode == 1
    assert "(flowgate.E002) PGBOUNCER_VERSION=1.20.1" in result.stderr
    assert "flowgate.W001" not in result.stderr


def test_manage_check_warns_of_a_url_key_secret_left_to_its_default(tmp_path):
    result = manage_check({}, tmp_path)
    assert result.returncode == 0
    assert "(flowgate.W001) URL_KEY_SECRET is SECRET_KEY" in result.stderr
    assert "flowgate.E" not in result.stderr


def test_manage_check_warns_of_allowed_hosts_of_any_host(tmp_path):
    result = manage_check({"ALLOWED_HOSTS": "*", "URL_KEY_SECRET": "u" * 50}, tmp_path)
    assert result.returncode == 0
    assert '(flowgate.W003) ALLOWED_HOSTS contains "*"' in result.stderr


def test_a_malformed_pgbouncer_version_stops_start_up(tmp_path):
    result = manage_check({"PGBOUNCER_VERSION": "1.21-beta"}, tmp_path)
    assert result.returncode != 0
    assert "PGBOUNCER_VERSION must be a release number such as 1.21.0, got '1.21-beta'" in result.stderr


def test_a_setting_under_the_name_it_had_before_is_a_warning(monkeypatch):
    assert check_renamed_settings() == []
    monkeypatch.setenv("DELIVERY_LEASE_SECONDS", "600")
    [warning] = check_renamed_settings()
    assert warning.id == "flowgate.W006" and "RUN_LEASE_SECONDS" in warning.msg
