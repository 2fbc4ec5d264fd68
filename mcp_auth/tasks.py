"""Celery tasks of mcp_auth: thin wrappers run by beat."""

from celery import shared_task

from mcp_auth import registration


@shared_task(name="mcp_auth.purge_unused_clients")
def purge_unused_clients() -> int:
    """Delete registered clients that never obtained a token (registration.purge_unused_clients)."""
    return registration.purge_unused_clients()
