"""oauth_v2 refreshes that race: two workers finding the same access token about to expire, on PostgreSQL, where the
row lock is real. The app rotates refresh tokens (each good once), so a second refresh with the same one would be
refused and the connection lost."""

from datetime import timedelta

import pytest
from django.db import connection as database
from django.utils import timezone

from catalog.models import App
from conftest import app_doc
from connections import keys, oauth
from connections.models import Connection
from tests import local_oauth
from tests.races import at_once

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(database.vendor != "postgresql", reason="SQLite has no row locks: select_for_update is a no-op"),
]


def test_two_workers_refreshing_at_once_spend_the_rotating_refresh_token_once(owner, make_catalog, settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True
    with local_oauth.running() as acorn:
        make_catalog(app_doc("acorn-crm", **local_oauth.catalog_entry(acorn.base)))
        issued = acorn.issue()
        connection = Connection.objects.create(
            owner=owner,
            app=App.objects.get(slug="acorn-crm"),
            label="Sales",
            auth_type="oauth_v2",
            credential_sealed=keys.seal(issued["access_token"]),
            refresh_sealed=keys.seal(issued["refresh_token"]),
            token_expires_at=timezone.now() + timedelta(seconds=5),  # within the margin: due
        )

        def worker():
            return oauth.access_token(Connection.objects.get(pk=connection.pk), seconds=20)

        tokens = at_once(worker, worker)

    assert [request["grant_type"] for request in acorn.token_requests] == ["refresh_token"]
    connection.refresh_from_db()
    assert connection.state == "connected"
    assert tokens == [keys.unseal(connection.credential_sealed)] * 2 and tokens[0] != issued["access_token"]
