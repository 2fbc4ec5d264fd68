"""Registered clients that never obtained a token are deleted by beat a day after registering."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import Application

from mcp_auth import registration, tasks
from mcp_auth.models import RegisteredClient
from mcp_auth.tests.conftest import register

pytestmark = pytest.mark.django_db


def age(client_id: str, seconds: int) -> None:
    RegisteredClient.objects.filter(application__client_id=client_id).update(
        registered_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_a_client_that_never_obtained_a_token_is_deleted_after_a_day(tokens):
    used_flow, _ = tokens
    abandoned, young = register(Client()), register(Client())
    manual = Application.objects.create(
        name="Made by staff", client_type="public", authorization_grant_type="authorization-code"
    )
    for client_id in (abandoned["client_id"], used_flow.client_id):
        age(client_id, 86400 + 60)
    age(young["client_id"], 86400 - 60)

    assert tasks.purge_unused_clients() == 1

    remaining = set(Application.objects.values_list("client_id", flat=True))
    assert remaining == {used_flow.client_id, young["client_id"], manual.client_id}
    assert not RegisteredClient.objects.filter(application__client_id=abandoned["client_id"]).exists()


def test_a_client_holding_a_token_is_kept_even_if_its_first_use_went_unrecorded(tokens):
    flow, _ = tokens
    RegisteredClient.objects.update(first_token_at=None)
    age(flow.client_id, 10 * 86400)
    assert registration.purge_unused_clients() == 0


def test_beat_runs_the_purge():
    entry = next(e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "mcp_auth.purge_unused_clients")
    assert len(entry["schedule"].hour) == 24  # every hour: a client goes at most an hour past its day
