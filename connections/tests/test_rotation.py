"""Credentials sealed under CONNECTION_KEYS: read under any key, re-sealed under the first by rotate_connection_keys."""

import io

import pytest
from django.core.management import call_command

from connections import keys, services
from connections.models import Connection

pytestmark = pytest.mark.django_db


@pytest.fixture
def connection(owner, plain_apps):
    return services.connect(owner=owner, app=plain_apps["token_mint"], label="Mine", credential="tok-old-secret-9876")


def test_a_credential_is_stored_sealed_and_shown_only_as_a_hint(connection):
    row = Connection.objects.get(pk=connection.pk)
    assert "tok-old-secret-9876" not in row.credential_sealed
    assert row.credential_hint == "…9876"
    assert keys.unseal(row.credential_sealed) == "tok-old-secret-9876"


def test_a_credential_sealed_under_a_key_no_longer_held_is_unreadable(connection, settings, new_key):
    settings.CONNECTION_KEYS = [new_key]
    with pytest.raises(keys.Unreadable):
        keys.unseal(Connection.objects.get(pk=connection.pk).credential_sealed)


def test_after_a_new_key_is_put_first_the_old_credential_still_reads(connection, settings, new_key):
    settings.CONNECTION_KEYS = [new_key, *settings.CONNECTION_KEYS]
    assert keys.unseal(Connection.objects.get(pk=connection.pk).credential_sealed) == "tok-old-secret-9876"


def test_after_the_command_it_reads_under_the_new_key_alone(connection, settings, new_key):
    old = list(settings.CONNECTION_KEYS)
    settings.CONNECTION_KEYS = [new_key, *old]
    out = io.StringIO()
    call_command("rotate_connection_keys", stdout=out)
    assert "1 credential(s) re-sealed" in out.getvalue()

    settings.CONNECTION_KEYS = [new_key]
    row = Connection.objects.get(pk=connection.pk)
    assert keys.unseal(row.credential_sealed) == "tok-old-secret-9876"
    assert row.state == Connection.State.CONNECTED
    settings.CONNECTION_KEYS = old
    with pytest.raises(keys.Unreadable):
        keys.unseal(row.credential_sealed)


def test_a_credential_no_key_opens_is_marked_for_reconnection_by_the_command(connection, settings, new_key):
    settings.CONNECTION_KEYS = [new_key]
    err = io.StringIO()
    call_command("rotate_connection_keys", stdout=io.StringIO(), stderr=err)
    assert "1 credential(s) opened under no key" in err.getvalue()
    assert Connection.objects.get(pk=connection.pk).state == Connection.State.NEEDS_RECONNECTION


def test_a_connection_without_a_credential_is_left_alone_by_the_command(owner, plain_apps, settings, new_key):
    open_data = services.connect(owner=owner, app=plain_apps["none"], label="Public")
    settings.CONNECTION_KEYS = [new_key]
    call_command("rotate_connection_keys", stdout=io.StringIO())
    row = Connection.objects.get(pk=open_data.pk)
    assert (row.credential_sealed, row.state) == ("", Connection.State.CONNECTED)
