"""Typed readers of environment variables that fail loudly with the variable's name."""

import os
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no, on/off), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, default: str) -> str:
    """An absolute http(s) URL without a trailing slash, path or query."""
    raw = os.environ.get(name, default).strip().rstrip("/")
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImproperlyConfigured(
            f"{name} must be an absolute http(s) URL such as https://app.example.com, got {raw!r}"
        )
    if parts.path or parts.query or parts.fragment:
        raise ImproperlyConfigured(f"{name} must name only scheme, host and port, got {raw!r}")
    return raw


def env_version(name: str) -> tuple[int, ...]:
    """A dotted release number such as 1.20.1, as a tuple of ints; () when unset or empty."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return ()
    parts = raw.split(".")
    if not all(part.isdigit() for part in parts):
        raise ImproperlyConfigured(f"{name} must be a release number such as 1.21.0, got {raw!r}")
    return tuple(int(part) for part in parts)


def env_rate(name: str, default: str) -> str:
    """A rate such as 300/5m: a count per a number of s, m, h or d."""
    import re

    raw = os.environ.get(name, default).strip()
    if not re.fullmatch(r"[1-9]\d*/[1-9]?\d*[smhd]", raw):
        raise ImproperlyConfigured(
            f"{name} must be a rate such as 300/5m (count/[n]unit, unit s, m, h or d), got {raw!r}"
        )
    return raw


def web_service_timeout() -> int:
    """WEB_SERVICE_TIMEOUT_SECONDS: read by settings and by the hooks process's worker (how long an answer may take)."""
    return env_int("WEB_SERVICE_TIMEOUT_SECONDS", 30, minimum=1)


def request_body_timeout() -> int:
    """REQUEST_BODY_TIMEOUT_SECONDS: read by settings and by the hooks process's worker, whose headers have as long."""
    return env_int("REQUEST_BODY_TIMEOUT_SECONDS", 60, minimum=1)


def env_fernet_keys(name: str) -> list[str]:
    """Comma-separated Fernet keys (32 url-safe base64 bytes each), newest first; [] when unset."""
    import base64
    import binascii

    keys = env_list(name)
    for position, key in enumerate(keys, start=1):
        try:
            valid = len(base64.urlsafe_b64decode(key.encode("ascii"))) == 32
        except (binascii.Error, ValueError):
            valid = False
        if not valid:
            raise ImproperlyConfigured(
                f"{name}: key {position} is not a Fernet key (32 bytes in url-safe base64; make one with "
                "python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())')"
            )
    return keys
