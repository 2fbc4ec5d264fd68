"""Picks the URLconf from the request's Host, so each public host answers only its own paths.

BASE_URL, HOOKS_URL and MCP_URL each have a URLconf; a host named by several
of them gets one URLconf joining theirs (no path in the spec collides).

Any other Host is looked up as an account's white-label domain on every
request, whatever ALLOWED_HOSTS says: a domain answers only the form trigger
and chat widget paths (config/urls/whitelabel.py) for its own account, and a
Host that is no account's domain answers nothing (404 on every path). So
ALLOWED_HOSTS=["*"] or extra names listed there never open BASE_URL's routes
(admin, sign-in, other accounts' pages) on a Host the service does not name;
ALLOWED_HOSTS only decides which of those get Django's 400 instead of that 404.

White-label domains are added in admin while the service runs, and
ALLOWED_HOSTS is read once at start: interfaces.whitelabel.domains.WhiteLabelHostMiddleware,
first of all,
also lets an account's white-label domain through the Host check when
ALLOWED_HOSTS refuses it, and sets request.white_label_owner_id to that
account (None on every other Host).
"""

import functools
import types
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.module_loading import import_string

ROLE_URLCONFS = {
    "base": "config.urls.base",
    "hooks": "config.urls.hooks",
    "mcp": "config.urls.mcp",
}
WHITE_LABEL = "config.urls.whitelabel"
# A Host that is neither a role host nor a white-label domain, yet allowed by ALLOWED_HOSTS: no path at all.
NOWHERE = "config.urls.nowhere"
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def normalize_host(host: str) -> str:
    """Lower-cased host[:port] with the default ports of http and https dropped."""
    host = host.lower()
    name, sep, port = host.rpartition(":")
    if sep and "]" not in port and port in _DEFAULT_PORTS.values():
        return name
    return host


@functools.cache
def roles_by_host(base_url: str, hooks_url: str, mcp_url: str) -> dict[str, tuple[str, ...]]:
    roles: dict[str, list[str]] = {}
    for role, url in (("base", base_url), ("hooks", hooks_url), ("mcp", mcp_url)):
        roles.setdefault(normalize_host(urlsplit(url).netloc), []).append(role)
    return {host: tuple(names) for host, names in roles.items()}


@functools.cache
def urlconf_for(roles: tuple[str, ...]) -> types.ModuleType | str:
    """A URLconf module joining the patterns of the given roles, built once; none: a URLconf of no path."""
    if not roles:
        return NOWHERE
    if len(roles) == 1:
        return ROLE_URLCONFS[roles[0]]
    module = types.ModuleType("config.urls.joined_" + "_".join(roles))
    module.urlpatterns = [pattern for role in roles for pattern in import_string(ROLE_URLCONFS[role] + ".urlpatterns")]
    return module


def role_hosts() -> dict[str, tuple[str, ...]]:
    """The service's own hosts (normalized) and the roles each serves."""
    return roles_by_host(settings.BASE_URL, settings.HOOKS_URL, settings.MCP_URL)


class HostRoutingMiddleware:
    """Sets request.urlconf: a role host's, a white-label domain's, or one of no path (see the module)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if getattr(request, "white_label_owner_id", None) is not None:
            request.urlconf = WHITE_LABEL
        else:
            request.urlconf = urlconf_for(role_hosts().get(normalize_host(request.get_host()), ()))
        return self.get_response(request)
