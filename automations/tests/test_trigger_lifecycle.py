"""A trigger's activate, deactivate and delete: called once by each service, and so by admin and the import command.

The MCP tools' paths are in mcp_server/tests/test_tools.py; the recording
trigger is conftest.py's trigger_hooks.
"""

import json

import pytest
from django.core.management import CommandError, call_command

from automations import services
from automations.models import Automation, LookupRow
from automations.triggers import TriggerRefused

pytestmark = pytest.mark.django_db

RECORD = [{"id": "log", "kind": "lookup_rows", "table": "seen", "action": "add", "values": {"n": 1}}]
REFUSAL = "the other app answered 401 to the registration"


def document(type_="webhook") -> dict:
    return {"trigger": {"type": type_}, "steps": RECORD}


def stored(automation) -> Automation:
    return Automation.objects.get(pk=automation.pk)


# --- the services ------------------------------------------------------------


def test_turning_on_activates_the_trigger_once(make_automation, trigger_hooks):
    automation = make_automation(RECORD, enabled=False)
    services.turn_on(automation=automation)
    services.turn_on(automation=automation)  # already on: not activated again
    assert trigger_hooks.calls == [("activate", "webhook", automation.pk)]
    assert stored(automation).enabled


def test_turning_off_deactivates_the_trigger_once(make_automation, trigger_hooks):
    automation = make_automation(RECORD)
    trigger_hooks.calls.clear()
    services.turn_off(automation=automation)
    services.turn_off(automation=automation)  # already off: not deactivated again
    assert trigger_hooks.calls == [("deactivate", "webhook", automation.pk)]


def test_creating_it_on_activates_the_trigger_once_and_off_calls_nothing(owner, trigger_hooks):
    on = services.create_automation(owner=owner, name="On", definition=document(), enabled=True)
    services.create_automation(owner=owner, name="Off", definition=document())
    assert trigger_hooks.calls == [("activate", "webhook", on.pk)]


def test_deleting_one_that_is_on_deactivates_then_deletes_its_trigger_before_the_row_goes(
    make_automation, trigger_hooks
):
    automation = make_automation(RECORD)
    trigger_hooks.calls.clear()
    services.delete_automation(automation=automation)
    assert trigger_hooks.calls == [("deactivate", "webhook", automation.pk), ("delete", "webhook", automation.pk)]
    assert trigger_hooks.row_at_delete is True
    assert not Automation.objects.exists()


def test_deleting_one_that_is_off_only_deletes_its_trigger(make_automation, trigger_hooks):
    automation = make_automation(RECORD, enabled=False)
    services.delete_automation(automation=automation)
    services.delete_automation(automation=automation)  # already gone: nothing more
    assert trigger_hooks.calls == [("delete", "webhook", automation.pk)]


def test_a_new_trigger_type_while_on_is_activated_before_the_old_one_is_deactivated(make_automation, trigger_hooks):
    automation = make_automation(RECORD)
    trigger_hooks.calls.clear()
    services.update_automation(automation=automation, definition=document("web_service"))
    assert trigger_hooks.calls == [("activate", "web_service", automation.pk), ("deactivate", "webhook", automation.pk)]


def test_a_new_trigger_type_while_off_calls_nothing(make_automation, trigger_hooks):
    automation = make_automation(RECORD, enabled=False)
    services.update_automation(automation=automation, definition=document("web_service"))
    services.update_automation(automation=automation, name="Renamed")
    assert trigger_hooks.calls == []


def test_a_trigger_that_refuses_leaves_the_automation_off_and_says_why(make_automation, trigger_hooks):
    automation = make_automation(RECORD, enabled=False)
    trigger_hooks.refuse = REFUSAL
    with pytest.raises(TriggerRefused, match="answered 401"):
        services.turn_on(automation=automation)
    assert not stored(automation).enabled and not automation.enabled
    assert not LookupRow.objects.exists()  # what activate wrote went with the refusal


def test_creating_an_automation_on_whose_trigger_refuses_creates_it_off(owner, trigger_hooks):
    trigger_hooks.refuse = REFUSAL
    with pytest.raises(TriggerRefused) as refused:
        services.create_automation(owner=owner, name="Refused", definition=document(), enabled=True)
    assert refused.value.automation.pk == Automation.objects.get(enabled=False).pk


def test_a_new_trigger_type_refused_while_on_changes_nothing_and_leaves_the_old_one_active(
    make_automation, trigger_hooks
):
    automation = make_automation(RECORD)
    trigger_hooks.calls.clear()
    trigger_hooks.refuse = REFUSAL
    with pytest.raises(TriggerRefused):
        services.update_automation(automation=automation, definition=document("web_service"))
    assert trigger_hooks.calls == [("activate", "web_service", automation.pk)]  # the old one was told nothing
    assert stored(automation).enabled and stored(automation).definition["trigger"]["type"] == "webhook"


# --- admin -------------------------------------------------------------------


def form(owner, *, type_="webhook", enabled=False, name="From admin") -> dict:
    data = {"owner": owner.pk, "name": name, "definition": json.dumps(document(type_))}
    return {**data, "enabled": "on"} if enabled else data


def change(staff_client, automation, **fields):
    return staff_client.post(
        f"/admin/automations/automation/{automation.pk}/change/",
        form(automation.owner, name=automation.name, **fields),
        follow=True,
    ).content.decode()


def action(staff_client, name, automation):
    return staff_client.post(
        "/admin/automations/automation/", {"action": name, "_selected_action": [automation.pk]}, follow=True
    ).content.decode()


def test_admins_form_activates_once_when_on_and_deactivates_once_when_off(staff_client, owner, trigger_hooks):
    staff_client.post("/admin/automations/automation/add/", form(owner, enabled=True))
    automation = Automation.objects.get()
    change(staff_client, automation, enabled=True)  # saved again, still on: nothing
    change(staff_client, automation, enabled=False)
    change(staff_client, automation, enabled=False)
    assert trigger_hooks.calls == [("activate", "webhook", automation.pk), ("deactivate", "webhook", automation.pk)]


def test_admins_actions_activate_and_deactivate_once(staff_client, make_automation, trigger_hooks):
    automation = make_automation(RECORD, enabled=False)
    assert "1 automation(s) on." in action(staff_client, "turn_on", automation)
    assert "1 automation(s) off." in action(staff_client, "turn_off", automation)
    assert trigger_hooks.calls == [("activate", "webhook", automation.pk), ("deactivate", "webhook", automation.pk)]


def test_admins_delete_deletes_the_trigger_once(
    staff_client, make_automation, trigger_hooks, django_capture_on_commit_callbacks
):
    automation = make_automation(RECORD, enabled=False)
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/admin/automations/automation/{automation.pk}/delete/", {"post": "yes"})
    assert trigger_hooks.calls == [("delete", "webhook", automation.pk)]
    assert not Automation.objects.exists()


def test_admins_form_with_a_new_trigger_type_while_on_activates_it_then_deactivates_the_old_one(
    staff_client, make_automation, trigger_hooks
):
    automation = make_automation(RECORD)
    trigger_hooks.calls.clear()
    change(staff_client, automation, type_="web_service", enabled=True)
    assert trigger_hooks.calls == [("activate", "web_service", automation.pk), ("deactivate", "webhook", automation.pk)]
    assert stored(automation).enabled


def test_admins_form_turning_off_with_a_new_trigger_type_never_activates_it(
    staff_client, make_automation, trigger_hooks
):
    automation = make_automation(RECORD)
    trigger_hooks.calls.clear()
    change(staff_client, automation, type_="web_service", enabled=False)
    assert trigger_hooks.calls == [("deactivate", "webhook", automation.pk)]
    assert stored(automation).definition["trigger"]["type"] == "web_service"


def test_admin_shows_the_refusal_and_keeps_the_automation_off(staff_client, owner, trigger_hooks):
    trigger_hooks.refuse = REFUSAL
    page = staff_client.post("/admin/automations/automation/add/", form(owner, enabled=True), follow=True)
    assert f"left off, its trigger refused: {REFUSAL}" in page.content.decode()
    automation = Automation.objects.get()
    assert not automation.enabled
    assert services.hook_url(automation)  # created through the service, with its URLs
    page = action(staff_client, "turn_on", automation)
    assert "left off, its trigger refused" in page and "0 automation(s) on." in page
    assert not stored(automation).enabled


def test_admin_saves_a_new_trigger_type_refused_while_on_and_leaves_it_off(
    staff_client, make_automation, trigger_hooks
):
    automation = make_automation(RECORD)
    trigger_hooks.calls.clear()
    trigger_hooks.refuse = REFUSAL
    page = change(staff_client, automation, type_="web_service", enabled=True)
    assert f"left off, its trigger refused: {REFUSAL}" in page
    assert trigger_hooks.calls == [("activate", "web_service", automation.pk), ("deactivate", "webhook", automation.pk)]
    assert not stored(automation).enabled
    assert stored(automation).definition["trigger"]["type"] == "web_service"
    assert services.hook_url(stored(automation)) is None  # the new type's URLs, as any save gives them


# --- the import command ------------------------------------------------------


def imported(tmp_path, owner, *flags, type_="webhook"):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"name": "Imported", **document(type_)}))
    call_command("import_automation", str(path), "--owner", owner.username, *flags)
    return Automation.objects.get(name="Imported")


def test_the_import_command_activates_once(tmp_path, owner, trigger_hooks):
    automation = imported(tmp_path, owner, "--on")
    imported(tmp_path, owner, "--on")  # imported again, already on: nothing
    assert trigger_hooks.calls == [("activate", "webhook", automation.pk)]


def test_the_import_command_reports_the_refusal(tmp_path, owner, trigger_hooks):
    trigger_hooks.refuse = REFUSAL
    with pytest.raises(CommandError, match=f"left off: its trigger refused: {REFUSAL}"):
        imported(tmp_path, owner, "--on")
    assert not Automation.objects.get(name="Imported").enabled


def test_the_import_command_changes_nothing_when_a_new_trigger_type_is_refused(tmp_path, owner, trigger_hooks):
    automation = imported(tmp_path, owner, "--on")
    trigger_hooks.refuse = REFUSAL
    with pytest.raises(CommandError, match=f"its trigger refused: {REFUSAL}; nothing changed"):
        imported(tmp_path, owner, type_="web_service")
    assert stored(automation).enabled and stored(automation).definition["trigger"]["type"] == "webhook"


def test_an_update_from_a_stale_copy_keeps_the_state_set_meanwhile_and_tells_no_trigger(make_automation, trigger_hooks):
    automation = make_automation(RECORD)  # on
    stale = stored(automation)
    services.turn_off(automation=automation)  # meanwhile, elsewhere
    trigger_hooks.calls.clear()
    services.update_automation(automation=stale, definition=document("web_service"), name="Renamed")
    assert trigger_hooks.calls == []  # off: the new trigger is not activated, the old one not deactivated again
    now = stored(automation)
    assert (now.enabled, now.name, now.definition["trigger"]["type"]) == (False, "Renamed", "web_service")
    assert stale.enabled is False  # the caller's copy shows what was saved
