"""Connections a definition names: any object in it with a member "connection" whose value is an integer id.

The reference shape (docs/connections.md) is `{"connection": <id>}` inside a
step or a trigger, as app actions and app triggers carry it. The ids
are read here from the definition alone: automations import no connection.
"""

MAX_DEPTH = 200  # as deep as jsonsafe lets a definition nest


def connection_ids(definition) -> set[int]:
    """Every connection id the definition names, wherever it sits."""
    found: set[int] = set()
    pending = [(definition, 0)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_DEPTH:
            continue
        if isinstance(value, dict):
            named = value.get("connection")
            if isinstance(named, int) and not isinstance(named, bool):
                found.add(named)
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
    return found


def owner_errors(document, owner_id: int) -> list[str]:
    """Each app step or app trigger whose connection is not one of the owner's connections to its app, with its path.

    Checked when a definition is saved for an owner (automations/services.py), since the definition's schema knows
    no owner; the step checks again before each call, as a connection may be deleted or given away since.
    """
    from connections.models import Connection

    if not isinstance(document, dict):
        return []
    steps = document.get("steps")
    parts = [("$.trigger", document.get("trigger"))]
    parts += [(f"$.steps[{index}]", step) for index, step in enumerate(steps if isinstance(steps, list) else [])]
    named = [(f"{where}.connection", id_, part.get("app")) for where, part in parts if (id_ := _named(part))]
    if not named:
        return []
    apps = dict(
        Connection.objects.filter(owner_id=owner_id, pk__in={connection for _, connection, _ in named}).values_list(
            "pk", "app__slug"
        )
    )
    return [
        f"{where}: {connection} is not one of your connections to {app!r}"
        for where, connection, app in named
        if apps.get(connection) != app
    ]


def _named(part) -> int | None:
    """The connection id a trigger or step names, if it names one."""
    named = part.get("connection") if isinstance(part, dict) else None
    return named if isinstance(named, int) and not isinstance(named, bool) else None
