"""The staff user `admin` of a development install (`make run`), with a random password shown once.

It replaces admin/admin, which every install shared: a fresh install gets a
new random password, and an install whose `admin` still has the password
"admin" from before gets one too. An `admin` with any other password is left
alone. `make run` shows the password in its closing banner (accounts/run_banner.py).
"""

import secrets

USERNAME = "admin"
OLD_PASSWORD = "admin"


def ensure_first_admin() -> str | None:
    """Create `admin` (or replace its old shared password) and return the new password; None when nothing changed."""
    from django.contrib.auth import get_user_model
    from django.db import IntegrityError, transaction

    users = get_user_model()
    password = secrets.token_urlsafe(16)
    existing = users.objects.filter(username=USERNAME).first()
    if existing is None:
        try:
            with transaction.atomic():
                users.objects.create_superuser(USERNAME, "admin@example.com", password)
        except IntegrityError:  # another start created it meanwhile
            return None
        return password
    if existing.check_password(OLD_PASSWORD):
        existing.set_password(password)
        existing.save(update_fields=["password"])
        return password
    return None
