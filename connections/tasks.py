"""Celery tasks of connections: the hourly cleanup of webhooks registered in other apps (registrations.py)."""

from celery import shared_task

from connections import registrations


@shared_task(name="connections.clean_registrations")
def clean_registrations() -> dict:
    """Beat's hourly entry: registrations no automation needs removed, failed removals tried again when due."""
    return registrations.cleanup()
