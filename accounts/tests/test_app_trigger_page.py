"""The owner's automation page for an app trigger: a manual one's webhook URL with what to paste where in the other
app, a self-registering one's registration."""

import pytest
from django.urls import reverse

from automations import services
from catalog.models import App
from connections import services as connection_services
from connections.tests.other_app import KEY, birch_api, birch_doc

pytestmark = pytest.mark.django_db
INSTRUCTIONS = "In Birch Forms, open Settings &gt; Webhooks, choose Add webhook and paste the URL."


@pytest.fixture
def birch(settings):
    settings.HTTP_STEP_ALLOW_PRIVATE = True  # the app is on loopback here
    with birch_api() as state:
        yield state


@pytest.fixture
def connection(make_catalog, birch, owner):
    make_catalog(birch_doc(birch.base))
    return connection_services.connect(
        owner=owner, app=App.objects.get(slug="birch-forms"), label="Forms", credential=KEY
    )


def automation_on(owner, connection, trigger: str):
    settings = {"type": "app_trigger", "app": "birch-forms", "trigger": trigger, "connection": connection.pk}
    return services.create_automation(
        owner=owner, name="Signups", definition={"trigger": settings, "steps": []}, enabled=True
    )


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
