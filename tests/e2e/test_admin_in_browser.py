"""Admin's pages in Chromium under the service's Content-Security-Policy: nothing refused, nothing left unstyled.

Against gunicorn on PostgreSQL and Redis, signed in through admin's own
sign-in page. The harness (tests/e2e/browser.py) fails a check on any
Content-Security-Policy violation the page reported (an inline style or
script refused), any script error, and any serious accessibility problem.
"""

import pytest

from automations.models import Run
from hooks import services as hook_services
from hooks.incoming import Incoming
from interfaces.models import WhiteLabelDomain
from tests.e2e.stack import END_TO_END

pytestmark = END_TO_END

ASK = [{"id": "ask", "kind": "approval", "title": "Refund order {{trigger.body.order}}", "expires_after": 86400}]


@pytest.fixture
def waiting_run(make_automation, eager_tasks):
    """A run waiting at an approval step for a person, with its link, as a worker leaves it."""
    automation = make_automation(ASK, name="Refunds")
    hook_services.accept_delivery(
        automation_id=automation.pk,
        incoming=Incoming("POST", "/automation-k", "", "application/json", b'{"order": 7}'),
    )
    run = Run.objects.get(automation=automation)
    assert run.status == Run.Status.WAITING
    return run


def test_admin_pages_apply_under_the_policy_with_no_violation(web, page, django_user_model, waiting_run, owner):
    django_user_model.objects.create_superuser("admin", "admin@example.com", "pw-admin-123")
    WhiteLabelDomain.objects.create(owner=owner, domain="forms.customer.example")
    automation = waiting_run.automation
    raw = page.raw

    page.open(f"{web.base}/admin/", "admin-sign-in")
    raw.get_by_label("Username").fill("admin")
    raw.get_by_label("Password").fill("pw-admin-123")
    raw.get_by_role("button", name="Log in").click()
    page.check("admin-index")
    assert raw.url == f"{web.base}/admin/"

    page.open(f"{web.base}/admin/automations/automation/", "automations-changelist")
    raw.get_by_role("checkbox").first.check()  # actions.js: the action bar counts the selection
    page.check("automations-selected")
    page.open(f"{web.base}/admin/automations/automation/{automation.pk}/change/", "automation-change-form")
    # The definition box's monospace font is applied, not refused as an inline style.
    font = raw.locator("#id_definition").evaluate("box => getComputedStyle(box).fontFamily")
    assert "monospace" in font
    page.open(f"{web.base}/admin/automations/automation/add/", "automation-add-form")

    page.open(f"{web.base}/admin/automations/run/?waiting=person", "execution-history-waiting")
    assert raw.get_by_role("link", name=str(waiting_run.pk), exact=True).is_visible()
    page.open(f"{web.base}/admin/automations/run/{waiting_run.pk}/change/", "waiting-run")
    assert raw.locator(f'a[href^="{web.base}/moderation?queue="]').is_visible()  # the approver's link

    # Django's split date and time widget (retired at) has inputs without labels of their own, which axe calls
    # critical: Django's markup, not the service's, so this form is checked for the policy and script errors only.
    page.open(f"{web.base}/admin/catalog/app/add/", "app-add-form-with-inline", accessibility=False)
    raw.get_by_text("Add another Operation").click()  # inlines.js adds a row from its template
    page.check("app-add-form-another-operation", accessibility=False)
    page.open(f"{web.base}/admin/interfaces/whitelabeldomain/", "white-label-domains")
    page.open(f"{web.base}/admin/interfaces/whitelabeldomain/add/", "white-label-domain-add-form")
