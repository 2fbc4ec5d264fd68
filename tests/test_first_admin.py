"""`make run`'s staff user: `admin` with a random password, printed once, never admin/admin."""

import os
import subprocess
import sys

import pytest
from django.contrib.auth import authenticate, get_user_model

from accounts.first_admin import ensure_first_admin
from tests.test_settings import ROOT

pytestmark = pytest.mark.django_db


def test_a_fresh_install_gets_admin_with_a_random_password():
    password = ensure_first_admin()
    assert password and password != "admin" and len(password) >= 20
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_staff and admin.is_superuser
    assert authenticate(username="admin", password=password) == admin
    assert authenticate(username="admin", password="admin") is None


def test_each_install_gets_its_own_password():
    first = ensure_first_admin()
    get_user_model().objects.all().delete()
    assert ensure_first_admin() != first


def test_the_password_is_given_only_once():
    password = ensure_first_admin()
    assert ensure_first_admin() is None
    assert authenticate(username="admin", password=password) is not None


def test_an_admin_left_with_the_old_shared_password_gets_a_random_one():
    get_user_model().objects.create_superuser("admin", "admin@example.com", "admin")
    password = ensure_first_admin()
    assert password and password != "admin"
    assert authenticate(username="admin", password="admin") is None
    assert authenticate(username="admin", password=password) is not None


def test_an_admin_with_a_password_of_its_own_is_left_alone():
    get_user_model().objects.create_superuser("admin", "admin@example.com", "chosen-by-its-owner")
    assert ensure_first_admin() is None
    assert authenticate(username="admin", password="chosen-by-its-owner") is not None


def test_make_run_creates_the_admin_with_this_module_not_a_fixed_password():
    makefile = (ROOT / "Makefile").read_text()
    assert "-m accounts.first_admin" in makefile
    assert "DJANGO_SUPERUSER_PASSWORD" not in makefile and "admin / admin" not in makefile


def test_run_as_a_module_it_prints_the_password_once(tmp_path):
    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY")}
    environment.update(DJANGO_SETTINGS_MODULE="config.settings", DEBUG="1", FLOWGATE_VAR_DIR=str(tmp_path))
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=environment, check=True)
    first = subprocess.run(
        [sys.executable, "-m", "accounts.first_admin"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    again = subprocess.run(
        [sys.executable, "-m", "accounts.first_admin"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert first.stdout.startswith("staff user admin, password: ")
    assert again.stdout == ""
