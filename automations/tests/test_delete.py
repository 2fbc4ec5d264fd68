"""Deleting an automation (SPEC 3, 7.2): what goes with it, admin's two ways of deleting, and a turn-on meanwhile.

The races with the intake and the workers are in test_delete_race.py (PostgreSQL).
"""

from urllib.parse import urlsplit

import pytest

from automations import deletion, services
from automations.models import Automation, LookupRow, Run
from hooks.models import Delivery
from hooks.tests.test_processing import RECORD, deliver, process

pytestmark = pytest.mark.django_db


def hook_path(automation) -> str:
    return urlsplit(services.hook_url(automation)).path


@pytest.mark.django_db(transaction=True)  # the hooks process looks keys up and stores rows in threads of its own
def test_every_row_that_points_at_it_goes_and_nothing_else(make_automation, owner, hooks_client):
    doomed, kept = make_automation(RECORD), make_automation(RECORD, name="kept")
    for automation in (doomed, kept):
        process(deliver(automation))  # a run and a lookup row of This automation
        process(deliver(automation))  # a duplicate suppressed by that run
        deliver(automation)  # queued
    shared = LookupRow.objects.create(owner=owner, automation=None, table="seen", data={})
    path = hook_path(doomed)
    assert hooks_client.post(path, data=b"{}", content_type="application/json").status_code == 200
    services.delete_automation(automation=doomed)
    assert not Automation.objects.filter(pk=doomed.pk).exists()
    for model in (Delivery, Run, LookupRow):
        assert not model.objects.filter(automation_id=doomed.pk).exists()
    assert (Delivery.objects.filter(automation=kept).count(), Run.objects.filter(automation=kept).count()) == (3, 1)
    assert LookupRow.objects.filter(automation=kept).count() == 1
    assert LookupRow.objects.filter(pk=shared.pk).exists()
    assert hooks_client.post(path, data=b"{}", content_type="application/json").status_code == 404


def test_deleting_one_already_gone_does_nothing(make_automation):
    automation = make_automation(RECORD)
    services.delete_automation(automation=automation)
    services.delete_automation(automation=automation)  # a second admin tab, say
    assert not Automation.objects.exists()


def test_one_turned_on_again_between_its_two_commits_is_turned_off_again_then_deleted(make_automation, monkeypatch):
    """Deleting runs only while off, so that no claim is under way when it locks the automation."""
    automation = make_automation(RECORD, enabled=False)
    turned_off = deletion.turned_off
    rounds = []

    def turned_on_meanwhile(automation_id):
        rounds.append(turned_off(automation_id))
        if len(rounds) == 1:
            services.turn_on(automation=automation)
        return rounds[-1]

    monkeypatch.setattr(deletion, "turned_off", turned_on_meanwhile)
    services.delete_automation(automation=automation)
    assert rounds == [True, True]
    assert not Automation.objects.exists()


@pytest.fixture
def through_the_service(monkeypatch):
    """The automations services.delete_automation was called for, which it then deleted."""
    called, real = [], services.delete_automation

    def delete_automation(*, automation):
        called.append(automation.pk)
        real(automation=automation)

    monkeypatch.setattr(services, "delete_automation", delete_automation)
    return called


def test_admins_delete_goes_through_the_service(
    staff_client, make_automation, through_the_service, django_capture_on_commit_callbacks
):
    automation = make_automation(RECORD)
    process(deliver(automation))
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(f"/admin/automations/automation/{automation.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert through_the_service == [automation.pk]
    assert not Automation.objects.exists() and not Run.objects.exists() and not Delivery.objects.exists()


def test_admins_delete_selected_action_goes_through_the_service(
    staff_client, make_automation, through_the_service, django_capture_on_commit_callbacks
):
    first, second, spared = (make_automation(RECORD, name=name) for name in ("first", "second", "spared"))
    for automation in (first, second, spared):
        process(deliver(automation))
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            "/admin/automations/automation/",
            {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"},
        )
    assert response.status_code == 302
    assert sorted(through_the_service) == sorted([first.pk, second.pk])
    assert list(Automation.objects.all()) == [spared]
    assert list(Run.objects.values_list("automation", flat=True)) == [spared.pk]
