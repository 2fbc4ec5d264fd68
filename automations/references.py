"""Connections a definition names: any object in it with a member "connection" whose value is an integer id.

The reference shape (docs/connections.md) is `{"connection": <id>}` inside a
step or a trigger, as app actions and app triggers will carry it. The ids
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
