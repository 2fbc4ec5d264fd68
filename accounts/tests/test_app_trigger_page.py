"""The owner's automation page for an app trigger: a manual one's webhook URL with what to paste where in the other
app, a self-registering one's registration."""

import pytest
from django.urls import reverse

from automations import services
from connections.tests import other_app

pytestmark = pytest.mark.django_db
INSTRUCTIONS = "In Birch Forms, open Settings &gt; Webhooks, choose Add webhook and paste the URL."


@pytest.fixture
def connection(make_catalog, birch, owner):
    return other_app.connect(owner, make_catalog, birch.base)


def automation_on(owner, connection, trigger: str):
    definition = other_app.definition(connection.pk, trigger)
    return services.create_automation(owner=owner, name="Signups", definition=definition, enabled=True)


def test_a_manual_trigger_shows_its_webhook_url_and_what_to_paste_where(client, owner, connection):
    automation = automation_on(owner, connection, "new_signup")
    client.force_login(owner)
    page = client.get(reverse("account-automation", args=[automation.pk])).content.decode()
    assert f'value="{services.hook_url(automation)}"' in page
    assert "New Signup in Birch Forms" in page
    assert "copy the webhook URL above and paste it in Birch Forms" in page
    assert INSTRUCTIONS in page
    german = client.get(reverse("account-automation", args=[automation.pk]), HTTP_ACCEPT_LANGUAGE="de")
    assert "New Signup in Birch Forms" not in german.content.decode()
    assert "kopieren Sie die Webhook-URL oben und fügen Sie sie in Birch Forms ein" in german.content.decode()


def test_a_self_registering_trigger_says_its_url_is_registered_and_nothing_is_to_paste(client, owner, connection):
    automation = automation_on(owner, connection, "new_response")
    client.force_login(owner)
    page = client.get(reverse("account-automation", args=[automation.pk])).content.decode()
    assert "Its webhook URL is registered in Birch Forms: there is nothing to paste." in page
    services.turn_off(automation=automation)
    page = client.get(reverse("account-automation", args=[automation.pk])).content.decode()
    assert "Turning the automation on registers its webhook URL in Birch Forms" in page
