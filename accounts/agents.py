"""Connected agents: the AI clients a person let act for them through the MCP server, and disconnecting one.

What counts as connected, and what disconnecting does, is mcp_auth's
(mcp_auth/connections.py: live tokens; revoked tokens refused by every
process at once). This module is the owner's side of it: a person sees and
disconnects only their own connections, a client named by its id.
"""

import enum
from dataclasses import dataclass
from datetime import datetime

from mcp_auth import authorization, connections
from mcp_auth.models import ConnectedClient


@dataclass(frozen=True)
class Agent:
    """A connected client as its owner's page shows it."""

    id: int
    name: str  # as the client named itself; empty when it gave none
    answers_to: str  # the host (or app scheme) its sign-in answers went to, as the consent page named it
    scopes: tuple[str, ...]  # what it may do, in words
    connected_at: datetime
    last_used_at: datetime | None


class Outcome(enum.Enum):
    DISCONNECTED = "disconnected"
    ALREADY = "already"  # this person's client, with nothing live left: a second click, or its tokens ran out
    NOT_FOUND = "not found"  # never this person's client, or no client at all


def _agent(connection: connections.Connection) -> Agent:
    application = connection.application
    first_uri = (application.redirect_uris or "").split()[:1]
    return Agent(
        id=application.pk,
        name=application.name,
        answers_to=authorization.redirect_target(first_uri[0]) if first_uri else "",
        scopes=tuple(authorization.describe_scopes(list(connection.scopes))),
        connected_at=connection.since,
        last_used_at=connection.last_used_at,
    )


def agents_of(*, user) -> list[Agent]:
    """The user's connected agents, by name."""
    return [_agent(connection) for connection in connections.connected_clients(user=user)]


def disconnect(*, user, agent_id: int) -> tuple[Outcome, Agent | None]:
    """Revoke the user's tokens at this client (never another person's); the agent as it was, when it was theirs."""
    connection = next((c for c in connections.connected_clients(user=user) if c.application.pk == agent_id), None)
    if connection is None:
        known = ConnectedClient.objects.filter(user=user, application_id=agent_id).exists()
        return (Outcome.ALREADY if known else Outcome.NOT_FOUND), None
    connections.disconnect(user=user, application=connection.application)
    return Outcome.DISCONNECTED, _agent(connection)
