"""Picks the URLconf from the request's Host, so each public host answers only its own paths.

BASE_URL, HOOKS_URL and MCP_URL each have a URLconf; a host named by several
of them gets one URLconf joining theirs (no path in the spec collides). Any
other allowed host is a white-label domain and answers only the form trigger
and chat widget paths.

White-label domains are added in admin while the service runs, and
ALLOWED_HOSTS is read once at start: WhiteLabelHostMiddleware, first of all,
accepts a Host that ALLOWED_HOSTS refuses when it is an account's white-label
domain (interfaces/domains.py), and sets request.white_label_owner_id to that
account. Any other Host still gets Django's 400.
"""

import functools
import types
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host
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


class WhiteLabelHostMiddleware:
    """Lets the request's Host through Django's host check when it is a white-label domain (see the module)."""

    def __init__(self, get_response):
        from interfaces import domains

        self.get_response = get_response
        self.owner_id_for_host = domains.owner_id_for_host

    def __call__(self, request):
        request.white_label_owner_id = None
        host = request._get_raw_host()
        name, _port = split_domain_port(host)
        if not (name and validate_host(name, settings.ALLOWED_HOSTS)):
            owner_id = self.owner_id_for_host(normalize_host(host)) if name else None
            if owner_id is not None:
                request.white_label_owner_id = owner_id
                # This request only: get_host() now answers the validated host instead of raising DisallowedHost.
                request.get_host = lambda: host
        return self.get_response(request)
