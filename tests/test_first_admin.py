"""`make run`'s staff user: `admin` with a random password, shown once in its banner, never admin/admin."""

import os
import re
import subprocess
import sys

import pytest
from django.contrib.auth import authenticate, get_user_model

from accounts.first_admin import ensure_first_admin
from tests.test_settings import ROOT

pytestmark = pytest.mark.django_db


RESET = (
    "to choose a new password: DEBUG=1 .venv/bin/python manage.py changepassword admin  "
    "(with this start's FLOWGATE_VAR_DIR)"
)


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
    assert "-m accounts.run_banner" in makefile
    assert "DJANGO_SUPERUSER_PASSWORD" not in makefile and "admin / admin" not in makefile


def test_make_runs_banner_shows_the_password_on_the_first_start_only_and_how_to_choose_one(tmp_path):
    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY")}
    environment.update(DJANGO_SETTINGS_MODULE="config.settings", DEBUG="1", FLOWGATE_VAR_DIR=str(tmp_path))
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=environment, check=True)
    first, again = (
        subprocess.run(
            [sys.executable, "-m", "accounts.run_banner"],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for _ in range(2)
    )
    password = re.search(r"user admin, password: (\S+)  \(shown on this first start only\)", first).group(1)
    assert len(password) >= 20
    assert password not in again and "user admin, password" not in again
    assert "user admin; its password was shown on the first start" in again
    for banner in (first, again):
        assert RESET in banner
