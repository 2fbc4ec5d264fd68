"""White-label domains: which hosts are accounts' own, the origin each account's page URLs are issued on, and the
name and logo their pages show.

The table is small (one row per account that has a domain) and read on
every request whose Host is none of the service's own: each process keeps
the whole table as one memory for CACHE_SECONDS (edge/process_cache.py),
so a request with an unknown Host costs no query, and a flood of made-up
Hosts costs one query per process every CACHE_SECONDS. Saving or deleting a
domain in admin empties this process's memory at once (forget); every other
process sees the change within CACHE_SECONDS, without a restart.
"""

import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.db import DatabaseError, transaction
from django.http.request import split_domain_port

from edge import process_cache
from edge.hosts import normalize_host, role_hosts
from overrides import django_request_host

logger = logging.getLogger(__name__)
CACHE_SECONDS = 5
_memory = process_cache.named("white-label-domains", max_size=1, seconds=CACHE_SECONDS)


@dataclass(frozen=True)
class Brand:
    """What a white-label domain's pages show where the service's name would be: the account's name (may be empty)
    and, when it has a logo, the digest naming its version (the logo's ETag)."""

    name: str
    logo_digest: str


@dataclass(frozen=True)
class Domains:
    owner_by_domain: dict[str, int]
    domain_by_owner: dict[int, str]
    brand_by_owner: dict[int, Brand]


def _domains() -> Domains:
    domains = _memory.get("all")
    if domains is None:
        from interfaces.models import WhiteLabelDomain

        try:
            rows = list(WhiteLabelDomain.objects.values_list("domain", "owner_id", "name", "logo_digest"))
        except DatabaseError:
            # A database that cannot be read must not turn every unknown Host into a 500: the last table read
            # answers, or none (white-label hosts get 400 until the database is back).
            logger.warning("white-label domains unreadable; answering from the last table read", exc_info=True)
            return _memory.get("all", stale=True) or Domains({}, {}, {})
        domains = Domains(
            {domain: owner for domain, owner, _, _ in rows},
            {owner: domain for domain, owner, _, _ in rows},
            {owner: Brand(name, digest) for _, owner, name, digest in rows},
        )
        _memory.set("all", domains)
    return domains


def owner_id_for_host(host: str) -> int | None:
    """The account whose white-label domain host is (host normalized: lower case, default port dropped), else None."""
    return _domains().owner_by_domain.get(host)


def brand_of(owner_id: int) -> Brand | None:
    """The name and logo of the account's white-label domain, None when it has none."""
    return _domains().brand_by_owner.get(owner_id)


def public_base_url(owner) -> str:
    """The origin the owner's hosted form and chat widget URLs are issued on: its white-label domain, else BASE_URL.

    The domain is served with BASE_URL's scheme (https in production).
    Only these two kinds of URL move; one-time forms, approval links,
    webhook and web service URLs stay on the service's hosts.
    """
    owner_id = getattr(owner, "pk", owner)
    domain = _domains().domain_by_owner.get(owner_id)
    if domain is None:
        return settings.BASE_URL
    return f"{urlsplit(settings.BASE_URL).scheme}://{domain}"


def forget() -> None:
    """Read the table again at the next request, once the current transaction (a save) has committed."""
    transaction.on_commit(lambda: _memory.pop("all"))


class WhiteLabelHostMiddleware:
    """Names the account of a white-label Host, and lets that Host through Django's host check (edge/hosts.py).

    Sets request.white_label_owner_id and request.white_label_brand (the
    account's name and logo, which templates/base.html shows): both None on
    every other Host.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.white_label_owner_id = request.white_label_brand = None
        host = django_request_host.raw_host(request)
        normalized = normalize_host(host)
        name, _port = split_domain_port(host)
        if name and normalized not in role_hosts():
            table = _domains()  # one read for both: a table read again between them could lack the brand
            owner_id = table.owner_by_domain.get(normalized)
            if owner_id is not None:
                request.white_label_owner_id = owner_id
                request.white_label_brand = table.brand_by_owner[owner_id]
                # This request only: get_host() answers the domain even when ALLOWED_HOSTS does not list it.
                request.get_host = lambda: host
        return self.get_response(request)
