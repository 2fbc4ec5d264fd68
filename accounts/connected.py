"""What an owner's pages read and change of their own connections: always through the owner, never by id alone.

Another owner's connection is as one that does not exist (404). An
automation uses a connection when its definition names it
(automations/references.py); one that is on blocks deleting it, since its
runs would fail at that step (docs/connections.md, "Deleting").
"""

from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Q

from automations import references, services
from automations.models import Automation
from catalog.models import is_slug
from catalog.selectors import connectable_apps
from connections import registrations
from connections import services as connection_services
from connections.models import Connection

APPS_SHOWN = 50


def connections_of(owner) -> list[Connection]:
    return list(Connection.objects.filter(owner=owner).select_related("app"))


def connection_of(owner, connection_id: int) -> Connection | None:
    return Connection.objects.select_related("app").filter(owner=owner, pk=connection_id).first()


def usage_of(owner) -> dict[int, list[Automation]]:
    """The owner's automations by the connection ids they name, each list by name.

    Definitions are read in Python: an owner has tens of automations, and the
    reference may sit anywhere in a step, where no portable index reaches.
    """
    using: dict[int, list[Automation]] = {}
    automations = Automation.objects.filter(owner=owner).only("pk", "name", "enabled", "definition").order_by("name")
    for automation in automations:
        for connection_id in references.connection_ids(automation.definition):
            using.setdefault(connection_id, []).append(automation)
    return using


def automations_using(connection: Connection) -> list[Automation]:
    return usage_of(connection.owner).get(connection.pk, [])


def apps_to_connect(query: str = ""):
    """Connectable apps (the feed's rule) matching query in name or slug, most popular first."""
    apps = connectable_apps().order_by("sort_order", "name")
    if query.strip():
        apps = apps.filter(Q(name__icontains=query.strip()) | Q(slug__icontains=query.strip()))
    return list(apps.only("slug", "name", "auth_type", "app_domain")[:APPS_SHOWN])


def connectable_app(slug: str):
    """The app of slug when it can be connected (the feed's rule), else None; a slug that cannot be one asks no
    query."""
    return connectable_apps().filter(slug=slug).first() if is_slug(slug) else None


@dataclass(frozen=True)
class Deletion:
    deleted: bool
    blocking: list[Automation] = field(default_factory=list)  # on, and naming it: deleting waits for them
    turned_off: list[Automation] = field(default_factory=list)
    left_naming: list[Automation] = field(default_factory=list)  # off, still naming it: they fail there if turned on


def delete(*, connection: Connection, turn_off: bool = False) -> Deletion:
    """Delete the connection unless an automation that is on uses it; with turn_off, those are turned off first.

    The turn-offs commit before the connection goes: each removes the webhook its trigger registered in the app
    once it commits, and so does release_connection for any other the connection still has, with the connection's
    credential. Deleted in the same transaction, the connection would be gone before those calls, and the webhooks
    left in the app (connections/registrations.py). An automation turned on meanwhile keeps the connection.
    """
    with transaction.atomic():
        using = automations_using(connection)
        blocking = [automation for automation in using if automation.enabled]
        if blocking and not turn_off:
            return Deletion(deleted=False, blocking=blocking)
        for automation in blocking:
            services.turn_off(automation=automation)
    registrations.release_connection(connection)
    with transaction.atomic():
        on_again = [automation for automation in automations_using(connection) if automation.enabled]
        if on_again:
            return Deletion(deleted=False, blocking=on_again, turned_off=blocking)
        connection_services.delete(connection=connection)
    return Deletion(deleted=True, turned_off=blocking, left_naming=using)
