"""Which redirect URIs a client may register: https, http on loopback, and the staff's allow list of app callbacks.

An authorization code travels to the redirect URI, so the URI decides who can
receive one. https URLs are anybody's web site, protected by TLS and by PKCE;
http is allowed only on the user's own machine (127.0.0.1, [::1], localhost,
any port: native clients such as Claude Code and VS Code listen on a port
they pick at run time, RFC 8252 7.3). An app's own scheme (cursor://...) can
be claimed by any program on the user's machine, so only the exact URIs
staff list in admin (AppCallback) are accepted.
"""

from urllib.parse import urlsplit

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
MAX_LENGTH = 500
# Schemes that run or read something in the browser itself: never a callback, whatever staff list.
FORBIDDEN_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "ws", "wss"})


def _shape_problem(uri: str) -> str | None:
    """A problem any redirect URI can have, whatever its scheme."""
    if not isinstance(uri, str) or not uri:
        return "must be a non-empty string"
    if len(uri) > MAX_LENGTH:
        return f"must be at most {MAX_LENGTH} characters"
    # Stored space-separated by django-oauth-toolkit; non-ASCII must be percent-encoded anyway.
    if any(ord(char) <= 32 or ord(char) >= 127 for char in uri):
        return "must not contain spaces, control characters or non-ASCII characters (percent-encode them)"
    if "#" in uri:
        return "must not contain a fragment (RFC 6749 3.1.2)"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018  (raises ValueError for a port out of range)
    except ValueError:
        return "is not a valid URI"
    if not parts.scheme:
        return "must be an absolute URI"
    if "@" in parts.netloc:
        return "must not carry a user name or password"
    if "%" in parts.netloc or "\\" in parts.netloc:
        # A browser decodes %65vil.com to evil.com, and the consent page would name the encoded host.
        return "must name its host plainly (no percent-encoding or backslash)"
    return None


def redirect_uri_problem(uri: str) -> str | None:
    """Why a client may not register this redirect URI, or None when it may."""
    if problem := _shape_problem(uri):
        return problem
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme == "https":
        return None if parts.hostname else "must name a host"
    if scheme == "http":
        if parts.hostname in LOOPBACK_HOSTS:
            return None
        return "may use http only on this machine (127.0.0.1, [::1] or localhost); use https"
    from mcp_auth.models import AppCallback

    if AppCallback.objects.filter(uri=uri).exists():
        return None
    return "uses an app scheme that is not on this server's list of allowed app callbacks"


def app_callback_problem(uri: str) -> str | None:
    """Why staff may not list this URI as an app callback, or None."""
    if problem := _shape_problem(uri):
        return problem
    scheme = urlsplit(uri).scheme.lower()
    if scheme in ("http", "https"):
        return "https and loopback http callbacks are accepted without an entry; list only app schemes"
    if scheme in FORBIDDEN_SCHEMES:
        return f"the {scheme}: scheme is never a callback"
    return None


def schemes_of(redirect_uris: str) -> list[str]:
    """The schemes a client's registered redirect URIs use (the authorization view may redirect to these)."""
    return sorted({urlsplit(uri).scheme.lower() for uri in redirect_uris.split()} | {"http", "https"})
