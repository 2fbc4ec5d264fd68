"""Every way of turning an automation on shows a self-registering app's refusal and leaves it off: the owner's page,
admin (its form and its action), the import command; staff see the registrations and retry a failed removal."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from automations import services
from automations.models import Automation
from connections.models import Registration
from connections.tests import other_app
from connections.tests.other_app import REFUSAL, definition

SAID = f"Birch Forms did not register the webhook: Birch Forms answered 422: {REFUSAL}"


@pytest.fixture
def connection(make_catalog, birch, owner):
    return other_app.connect(owner, make_catalog, birch.base)


@pytest.fixture
def automation(owner, connection):
    return services.create_automation(owner=owner, name="Responses", definition=definition(connection.pk))


def is_on(automation) -> bool:
    return Automation.objects.get(pk=automation.pk).enabled


@pytest.mark.django_db
def test_the_owners_page_shows_the_apps_refusal_and_the_automation_stays_off(client, owner, birch, automation):
    client.force_login(owner)
    birch.refuse = True
    switch = reverse("account-switch", args=[automation.pk])
    page = client.post(switch, {"state": "on"}, follow=True).content.decode()
    assert f"Left off: its trigger refused: {SAID}" in page
    assert not is_on(automation)
    birch.refuse = False
    client.post(switch, {"state": "on"})
    assert is_on(automation) and Registration.objects.get().state == Registration.State.ACTIVE


@pytest.mark.django_db
def test_the_import_command_prints_the_apps_refusal_and_leaves_it_off(tmp_path, owner, birch, connection):
    path = tmp_path / "responses.json"
    path.write_text(json.dumps({"name": "Imported", **definition(connection.pk)}))
    birch.refuse = True
    with pytest.raises(CommandError) as refused:
        call_command("import_automation", str(path), owner=owner.username, on=True)
    assert f"left off: its trigger refused: {SAID}" in str(refused.value)
    assert not Automation.objects.get(name="Imported").enabled
    assert not Registration.objects.exists()


@pytest.mark.django_db(transaction=True)  # admin turns such an automation on once its own transaction committed
def test_admins_form_turns_it_on_after_its_commit_and_shows_the_apps_refusal(staff_client, owner, birch, connection):
    form = {"owner": owner.pk, "name": "From admin", "definition": json.dumps(definition(connection.pk))}
    birch.refuse = True
    page = staff_client.post("/admin/automations/automation/add/", {**form, "enabled": "on"}, follow=True)
    assert f"left off, its trigger refused: {SAID}" in page.content.decode().replace("&#x27;", "'")
    automation = Automation.objects.get()
    assert not automation.enabled
    birch.refuse = False
    change = f"/admin/automations/automation/{automation.pk}/change/"
    page = staff_client.post(change, {**form, "enabled": "on"}, follow=True).content.decode()
    assert "left off" not in page
    assert is_on(automation) and list(birch.hooks.values()) == [services.hook_url(automation)]
    staff_client.post(change, {**form, "name": "Renamed", "enabled": "on"})  # on, its trigger unchanged
    assert is_on(automation) and list(birch.hooks) == ["hook-1"]
    assert [method for method, *_ in birch.requests] == ["POST", "POST"]  # the refused one, then the one kept


@pytest.mark.django_db
def test_admins_action_shows_the_apps_refusal(staff_client, birch, automation):
    birch.refuse = True
    page = staff_client.post(
        "/admin/automations/automation/", {"action": "turn_on", "_selected_action": [automation.pk]}, follow=True
    ).content.decode()
    assert f"left off, its trigger refused: {SAID}" in page.replace("&#x27;", "'") and "0 automation(s) on." in page
    assert not is_on(automation)


@pytest.mark.django_db
def test_staff_see_registrations_and_retry_a_failed_removal(
    staff_client, birch, automation, django_capture_on_commit_callbacks
):
    services.turn_on(automation=automation)
    birch.fail_deletes = True
    with django_capture_on_commit_callbacks(execute=True):
        services.turn_off(automation=automation)
    registration = Registration.objects.get()
    listing = staff_client.get("/admin/connections/registration/").content.decode()
    assert "Removal failed" in listing and "Birch Forms answered 500: the hook store is down" in listing
    detail = staff_client.get(f"/admin/connections/registration/{registration.pk}/change/").content.decode()
    assert "hook-1" in detail and services.hook_url(automation).rsplit("/", 1)[-1] not in detail
    birch.fail_deletes = False
    page = staff_client.post(
        "/admin/connections/registration/",
        {"action": "retry_removal", "_selected_action": [registration.pk]},
        follow=True,
    ).content.decode()
    assert "1 of 1 removal(s) confirmed by the app." in page
    registration.refresh_from_db()
    assert registration.state == Registration.State.REMOVED and birch.hooks == {}
