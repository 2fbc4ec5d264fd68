"""Registered clients that never obtained a token are deleted by beat a day after registering."""

import hashlib
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from mcp_auth import registration, tasks
from mcp_auth.models import RegisteredClient, SpentCode
from mcp_auth.tests.conftest import code_for, refresh, register, start_flow

pytestmark = pytest.mark.django_db


def checksum(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


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


def test_beat_clears_expired_grants_old_revoked_tokens_and_spent_codes_older_than_a_day(
    client, signed_in, agent, tokens, settings
):
    flow, body = tokens
    SpentCode.objects.create(code_checksum="0" * 64)
    SpentCode.objects.update(spent_at=timezone.now() - timedelta(days=1, seconds=1))
    recent = SpentCode.objects.create(code_checksum="1" * 64)
    renewed = refresh(client, flow, body["refresh_token"]).json()  # the first refresh token is now revoked
    RefreshToken.objects.filter(revoked__isnull=False).update(
        revoked=timezone.now() - timedelta(seconds=settings.OAUTH2_PROVIDER["REFRESH_TOKEN_EXPIRE_SECONDS"] + 1)
    )
    code_for(signed_in, start_flow(agent))  # a code never exchanged
    Grant.objects.update(expires=timezone.now() - timedelta(seconds=1))

    tasks.clear_expired()

    assert list(SpentCode.objects.all()) == [recent]
    assert not Grant.objects.exists()
    assert list(RefreshToken.objects.values_list("token_checksum", flat=True)) == [checksum(renewed["refresh_token"])]
    assert AccessToken.objects.get().token_checksum == checksum(renewed["access_token"])
    entry = next(e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "mcp_auth.clear_expired")
    assert len(entry["schedule"].hour) == 24
