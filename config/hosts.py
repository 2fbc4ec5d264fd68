"""Picks the URLconf from the request's Host, so each public host answers only its own paths.

BASE_URL, HOOKS_URL and MCP_URL each have a URLconf; a host named by several
of them gets one URLconf joining theirs (no path in the spec collides). Any
other allowed host is a white-label domain and answers only the form trigger
and chat widget paths.
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
    """A URLconf module joining the patterns of the given roles, built once."""
    if not roles:
        return WHITE_LABEL
    if len(roles) == 1:
        return ROLE_URLCONFS[roles[0]]
    module = types.ModuleType("config.urls.joined_" + "_".join(roles))
    module.urlpatterns = [pattern for role in roles for pattern in import_string(ROLE_URLCONFS[role] + ".urlpatterns")]
    return module


class HostRoutingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        hosts = roles_by_host(settings.BASE_URL, settings.HOOKS_URL, settings.MCP_URL)
        request.urlconf = urlconf_for(hosts.get(normalize_host(request.get_host()), ()))
        return self.get_response(request)
