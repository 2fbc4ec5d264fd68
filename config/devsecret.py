"""The development SECRET_KEY: random, made once per install, kept in VAR_DIR and readable by its owner only.

It replaces a fixed string that every install shared: with it anyone could
forge sessions and, as URL_KEY_SECRET defaults to SECRET_KEY, unseal the URL
keys of a database they read.
"""

import os
import secrets
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

FILENAME = "development-secret-key"


def development_secret(var_dir: Path) -> str:
    """The install's development secret, made on first use; every process of the install reads the same one."""
    path = var_dir / FILENAME
    if not path.exists():
        var_dir.mkdir(parents=True, exist_ok=True)
        descriptor, draft = tempfile.mkstemp(dir=var_dir, prefix=f".{FILENAME}.")  # mode 0600
        try:
            with os.fdopen(descriptor, "w") as file:
                file.write(secrets.token_urlsafe(50) + "\n")
            try:
                # Whole or absent, never half-written: processes starting together keep the first one linked.
                os.link(draft, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(draft)
    secret = path.read_text().strip()
    if len(secret) < 50:
        raise ImproperlyConfigured(f"{path} holds no usable secret; delete it to make a new one, or set SECRET_KEY.")
    return secret
