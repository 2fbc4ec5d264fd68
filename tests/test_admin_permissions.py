"""Django admin as staff with fewer than every permission: what they may do, and which URL keys they see.

State-changing actions need change permission; a URL key (a password) is
shown to its automation's owner and to superusers only (publickeys/admin_display.py).
"""

from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import Permission

from automations import services
from automations.models import Automation
from catalog.models import App
from hooks.tests.test_processing import RECORD
from interfaces.approvals import queues
from interfaces.models import ApprovalQueue
from interfaces.tests.support import ASK_THEN_RECORD, deliver
from publickeys.admin_display import HIDDEN

pytestmark = pytest.mark.django_db


def staff(django_user_model, name: str, *codenames: str):
    user = django_user_model.objects.create_user(name, f"{name}@example.com", f"pw-{name}-123", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


@pytest.fixture
def viewer(client, django_user_model):
    """Staff who may view automations, runs, apps and users, and change nothing."""
    client.force_login(staff(django_user_model, "viewer", "view_automation", "view_run", "view_app", "view_user"))
    return client


def act(client, changelist: str, action: str, pk) -> None:
    client.post(changelist, {"action": action, "_selected_action": [pk]})


def test_staff_who_may_only_view_cannot_run_actions_that_change_things(viewer, make_automation, owner, client):
    automation = make_automation(RECORD)
    hook = services.hook_url(automation)
    for action in ("turn_off", "reset_processing", "issue_new_urls"):
        act(viewer, "/admin/automations/automation/", action, automation.pk)
    app = App.objects.create(slug="acme", name="Acme", auth_type="none", app_domain="acme.example")
    act(viewer, "/admin/catalog/app/", "retire", app.pk)
    listing = viewer.get("/admin/automations/automation/").content.decode()
    automation.refresh_from_db()
    app.refresh_from_db()
    assert automation.enabled and services.hook_url(automation) == hook
    assert app.retired_at is None
    assert "turn_off" not in listing and "issue_new_urls" not in listing


def test_staff_who_may_change_automations_can_turn_them_off(client, django_user_model, make_automation):
    automation = make_automation(RECORD)
    client.force_login(staff(django_user_model, "editor", "view_automation", "change_automation"))
    act(client, "/admin/automations/automation/", "turn_off", automation.pk)
    automation.refresh_from_db()
    assert not automation.enabled


def test_staff_see_the_urls_of_their_own_automations_only(client, django_user_model, make_automation, owner):
    theirs = make_automation(RECORD)  # the owner's
    client.force_login(staff(django_user_model, "ops", "view_automation"))
    page = client.get(f"/admin/automations/automation/{theirs.pk}/change/").content.decode()
    assert HIDDEN in page and urlsplit(services.hook_url(theirs)).path not in page
    owner.is_staff = True
    owner.save()
    owner.user_permissions.set(Permission.objects.filter(codename="view_automation"))
    client.force_login(owner)
    page = client.get(f"/admin/automations/automation/{theirs.pk}/change/").content.decode()
    assert services.hook_url(theirs) in page and services.web_service_url(theirs) in page


def test_an_approval_link_is_shown_to_the_owner_and_superusers_only(client, django_user_model, make_automation, owner):
    run = deliver(make_automation(ASK_THEN_RECORD))
    queue = ApprovalQueue.objects.get()
    link = urlsplit(queues.approval_url(queue)).query
    client.force_login(staff(django_user_model, "ops", "view_approvalqueue", "view_run"))
    pages = [
        client.get("/admin/interfaces/approvalqueue/").content.decode(),
        client.get(f"/admin/interfaces/approvalqueue/{queue.pk}/change/").content.decode(),
        client.get(f"/admin/automations/run/{run.pk}/change/").content.decode(),
    ]
    assert all(HIDDEN in page and link not in page for page in pages)
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw-root-123"))
    assert link in client.get(f"/admin/automations/run/{run.pk}/change/").content.decode()
    assert link in client.get("/admin/interfaces/approvalqueue/").content.decode()
    assert Automation.objects.count() == 1


@pytest.mark.parametrize(
    "page", ["/admin/automations/run/?status=%00", "/admin/catalog/app/?category=%00", "/admin/auth/user/?q=a%00"]
)
def test_a_nul_in_an_admin_query_is_a_400(client, django_user_model, page):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw-root-123"))
    assert client.get(page).status_code == 400
    assert client.get(page.replace("%00", "x")).status_code in (200, 302)


def test_actions_that_change_something_leave_a_history_entry(client, django_user_model, make_automation):
    from django.contrib.admin.models import LogEntry

    automation = make_automation(RECORD)
    client.force_login(staff(django_user_model, "editor", "view_automation", "change_automation"))
    act(client, "/admin/automations/automation/", "turn_off", automation.pk)
    act(client, "/admin/automations/automation/", "issue_new_urls", automation.pk)
    entries = LogEntry.objects.filter(object_id=str(automation.pk)).order_by("pk")
    assert [(entry.user.username, entry.get_change_message()) for entry in entries] == [
        ("editor", "Turned off."),
        ("editor", "Issued new URLs; the old ones stopped working."),
    ]
    history = client.get(f"/admin/automations/automation/{automation.pk}/history/").content.decode()
    assert "Turned off." in history
