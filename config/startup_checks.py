"""Start-up refusals of configurations that would expose the service: DEBUG beyond loopback, a listen-only URL host."""

import ipaddress
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured


def refuse_debug_beyond_loopback(name: str, bind: str) -> None:
    """Stop start-up when DEBUG is on and the bind named `name` accepts connections from other machines.

    DEBUG pages show settings, tracebacks and local variables to whoever
    reaches them, and DEBUG lets the development secret stand in for
    SECRET_KEY.
    """
    for address in bind.split(","):
        if address.strip() and not is_loopback_bind(address.strip()):
            raise ImproperlyConfigured(
                f"DEBUG is on and {name}={bind} accepts connections from other machines. "
                f"Set {name} to a loopback address such as 127.0.0.1:8000, or set DEBUG=0 and SECRET_KEY."
            )


def is_loopback_bind(address: str) -> bool:
    """Whether a gunicorn bind (host[:port], [IPv6]:port, unix:path) is reachable from this machine only."""
    if address.startswith("unix:"):
        return True
    if address.startswith("["):
        host = address[1:].partition("]")[0]
    elif address.count(":") == 1:
        host = address.partition(":")[0]
    else:
        host = address
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # any other name may resolve anywhere; fd:// binds are unknown
        return False


def refuse_listen_only_host(name: str, url: str) -> None:
    """Stop start-up when a public URL names 0.0.0.0 or ::, addresses to listen on that no client can ask for.

    Its host name would become an allowed host that only a forged Host header
    can carry (as with a BASE_URL derived from WEB_BIND=0.0.0.0:8000).
    """
    host = urlsplit(url).hostname or ""
    try:
        unspecified = ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return
    if unspecified:
        raise ImproperlyConfigured(
            f"{name}={url} names {host}, an address to listen on, not one clients reach. "
            f"Set {name} to the URL clients use, such as http://192.0.2.10:8000 or https://app.example.com."
        )


def connection_keys(keys: list[str], *, debug: bool, secret_key: str) -> list[str]:
    """CONNECTION_KEYS as set; with DEBUG and none set, one derived from SECRET_KEY; else stop start-up.

    The keys seal owners' credentials on other apps (docs/connections.md). A
    key derived from SECRET_KEY would tie those credentials to a secret that is
    rotated for other reasons, so a deployment names its own.
    """
    if keys:
        return keys
    if not debug:
        raise ImproperlyConfigured(
            "CONNECTION_KEYS is not set. Set it to a Fernet key "
            "(python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'), "
            "or set DEBUG=1 for local development."
        )
    import base64
    import hmac

    derived = hmac.digest(secret_key.encode(), b"flowgate-connection-credentials", "sha256")
    return [base64.urlsafe_b64encode(derived).decode()]
