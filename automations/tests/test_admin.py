"""Django admin for automations: create and edit with a validated definition, on and off, reset, Execution History."""

import json
from urllib.parse import urlsplit

import pytest

from automations import services
from automations.models import Automation, LookupRow, Run
from hooks import selectors
from hooks.models import Delivery, Maintenance
from hooks.tests.test_processing import RECORD, deliver, process

pytestmark = pytest.mark.django_db


def form(owner, **changes):
    data = {
        "owner": owner.pk,
        "name": "From admin",
        "definition": json.dumps({"trigger": {"type": "webhook"}, "steps": RECORD}),
    }
    data.update(changes)
    return data


def test_staff_create_an_automation_and_see_its_urls(staff_client, owner):
    response = staff_client.post("/admin/automations/automation/add/", form(owner))
    assert response.status_code == 302
    automation = Automation.objects.get()
    assert not automation.enabled
    page = staff_client.get(f"/admin/automations/automation/{automation.pk}/change/").content.decode()
    assert services.hook_url(automation) in page
    assert services.web_service_url(automation) in page


def test_a_bad_definition_is_refused_with_the_path_of_each_error(staff_client, owner):
    bad = json.dumps({"trigger": {"type": "webhook"}, "steps": [{"id": "a", "kind": "http_request"}]})
    response = staff_client.post("/admin/automations/automation/add/", form(owner, definition=bad))
    assert response.status_code == 200
    assert "$.steps[0]: &#x27;url&#x27; is a required property" in response.content.decode()
    assert not Automation.objects.exists()


def test_turning_on_in_the_form_replays_kept_deliveries(
    staff_client, make_automation, eager_tasks, django_capture_on_commit_callbacks
):
    automation = make_automation(RECORD, enabled=False)
    deliver(automation)
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            f"/admin/automations/automation/{automation.pk}/change/",
            form(automation.owner, name=automation.name, enabled="on", definition=json.dumps(automation.definition)),
        )
    assert response.status_code == 302
    assert Delivery.objects.get().status == Delivery.Status.DONE


def test_the_reset_action_needs_the_automation_off(staff_client, make_automation, django_capture_on_commit_callbacks):
    on, off = make_automation(RECORD), make_automation(RECORD, enabled=False, name="off one")
    for automation in (on, off):
        deliver(automation)
    LookupRow.objects.create(owner=off.owner, automation=off, table="t", data={})
    with django_capture_on_commit_callbacks(execute=True):  # hooks discards the deliveries once reset commits
        response = staff_client.post(
            "/admin/automations/automation/",
            {"action": "reset_processing", "_selected_action": [on.pk, off.pk]},
            follow=True,
        )
    assert "turn the automation off before resetting it" in response.content.decode()
    assert list(Delivery.objects.values_list("automation", flat=True)) == [on.pk]
    assert not LookupRow.objects.exists()


def test_execution_history_shows_runs_with_trigger_steps_errors_and_suppressed(staff_client, make_automation):
    automation = make_automation(RECORD)
    first = process(deliver(automation))
    process(deliver(automation))
    response = staff_client.get(
        "/admin/automations/run/", {"automation__id__exact": automation.pk, "suppressed": "yes"}
    )
    assert response.status_code == 200
    page = staff_client.get(f"/admin/automations/run/{first.run.pk}/change/").content.decode()
    assert "a@example.com" in page and "lookup_rows" in page
    assert Run.objects.get().suppressed_count == 1


def test_pending_retries_and_deliveries_are_listed(staff_client, make_automation):
    automation = make_automation(RECORD, enabled=False)
    deliver(automation)
    assert staff_client.get("/admin/hooks/delivery/", {"status": "pending"}).status_code == 200


@pytest.mark.django_db(transaction=True)  # the hooks process looks keys up and stores rows in threads of its own
def test_the_maintenance_switch(staff_client, make_automation, hooks_client):
    automation = make_automation(RECORD)
    path = "/" + services.hook_url(automation).split("/", 3)[3]
    assert staff_client.post("/admin/hooks/maintenance/add/", {"active": "on", "note": "db upgrade"}).status_code == 302
    assert hooks_client.post(path).status_code == 503
    maintenance = Maintenance.objects.get()
    staff_client.post(f"/admin/hooks/maintenance/{maintenance.pk}/change/", {"note": "done"})
    assert hooks_client.post(path).status_code == 200


@pytest.mark.django_db(transaction=True)  # the hooks process looks keys up and stores rows in threads of its own
def test_issuing_new_urls_retires_the_old_ones(staff_client, make_automation, hooks_client):
    automation = make_automation(RECORD)
    old_hook, old_service = services.hook_url(automation), services.web_service_url(automation)
    assert hooks_client.post(urlsplit(old_hook).path, data=b"{}", content_type="application/json").status_code == 200
    response = staff_client.post(
        "/admin/automations/automation/", {"action": "issue_new_urls", "_selected_action": [automation.pk]}, follow=True
    )
    assert "have new URLs" in response.content.decode()
    automation.refresh_from_db()
    new_hook, new_service = services.hook_url(automation), services.web_service_url(automation)
    assert {new_hook, new_service}.isdisjoint({old_hook, old_service})
    selectors.forget_hook_keys()  # this process remembered the old key for a few seconds, as every process does
    assert hooks_client.post(urlsplit(old_hook).path, data=b"{}", content_type="application/json").status_code == 404
    assert hooks_client.post(urlsplit(old_service).path).status_code == 404
    assert hooks_client.post(urlsplit(new_hook).path, data=b"{}", content_type="application/json").status_code == 200


@pytest.mark.parametrize(
    "odd",
    ["NaN", "Infinity", '"a\\u0000b"', "[" * 300 + "]" * 300, "[" * 100_000 + "]" * 100_000],
    ids=["nan", "infinity", "nul", "300 deep", "100000 deep"],
)
def test_a_definition_no_database_stores_is_refused_on_its_field(staff_client, owner, odd):
    steps = '[{"id": "s", "kind": "set_values", "values": {"x": ' + odd + "}}]"
    definition = '{"trigger": {"type": "webhook"}, "steps": ' + steps + "}"
    response = staff_client.post("/admin/automations/automation/add/", form(owner, definition=definition))
    assert response.status_code == 200
    said = response.context["adminform"].form.errors["definition"][0]
    assert said.startswith("$.steps[0].values.x") or said == "JSON nested too deep"
    assert not Automation.objects.exists()


@pytest.mark.parametrize(
    "odd", ['{"a": "x\\u0000y"}', '{"a": NaN}', "[" * 100_000 + "]" * 100_000], ids=["nul", "nan", "100000 deep"]
)
def test_table_data_no_database_stores_is_refused(staff_client, owner, odd):
    response = staff_client.post("/admin/automations/lookuprow/add/", {"table": "t", "owner": owner.pk, "data": odd})
    assert response.status_code == 200 and response.context["adminform"].form.errors["data"]
    assert not LookupRow.objects.exists()


def test_a_run_is_named_by_its_automation_and_its_delivery_row_says_so(staff_client, make_automation):
    automation = make_automation(RECORD, name="Record signups")
    delivery = process(deliver(automation))
    assert str(delivery.run) == f'run {delivery.run.pk} of "Record signups" (succeeded)'
    page = staff_client.get("/admin/hooks/delivery/").content.decode()
    assert f"run {delivery.run.pk} of &quot;Record signups&quot; (succeeded)" in page


def test_deliveries_are_listed_newest_first(staff_client, make_automation):
    automation = make_automation(RECORD, enabled=False)
    older, newer = deliver(automation), deliver(automation)
    page = staff_client.get("/admin/hooks/delivery/").content.decode()
    assert page.index(str(newer.public_id)) < page.index(str(older.public_id))


def test_a_failed_run_does_not_claim_it_succeeded(staff_client, make_automation):
    run = Run.objects.create(automation=make_automation(RECORD), source="webhook", status="failed", error="boom")
    page = staff_client.get(f"/admin/automations/run/{run.pk}/change/").content.decode()
    assert "because this run succeeded" not in page
    assert "Only a run that succeeded or was stopped by a condition suppresses duplicates." in page
