"""Celery tasks of mcp_auth: thin wrappers run by beat."""

from celery import shared_task
from oauth2_provider.models import clear_expired as clear_expired_tokens

from mcp_auth import registration, spent_codes


@shared_task(name="mcp_auth.purge_unused_clients")
def purge_unused_clients() -> int:
    """Delete registered clients that never obtained a token (registration.purge_unused_clients)."""
    return registration.purge_unused_clients()


@shared_task(name="mcp_auth.clear_expired")
def clear_expired() -> None:
    """Delete what can no longer be used, so the token tables stop growing with every sign-in.

    django-oauth-toolkit's clear_expired: expired grants and access tokens,
    and refresh tokens past their lifetime (revoked ones are kept that long,
    since reuse detection needs them). Then spent codes older than a day.
    """
    clear_expired_tokens()
    spent_codes.forget_old()
