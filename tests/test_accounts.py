"""What one account uses is its own: another account's limits are untouched by it."""

from urllib.parse import urlsplit

import pytest

from automations import services as automation_services
from automations.models import Run, WebServiceUsage

pytestmark = pytest.mark.django_db

ANSWER = [{"id": "answer", "kind": "respond", "status": 201, "body": {"ok": True}}]


def call(client, automation):
    return client.get(urlsplit(automation_services.web_service_url(automation)).path)


def test_an_account_that_used_its_monthly_quota_leaves_another_accounts_calls_answering(
    client, make_automation, owner, another_account, settings
):
    settings.WEB_SERVICE_MONTHLY_QUOTA = 1
    mine, theirs = make_automation(ANSWER), make_automation(ANSWER, user=another_account)
    assert call(client, mine).status_code == 201
    assert call(client, mine).status_code == 429
    assert call(client, theirs).status_code == 201
    assert {usage.owner_id: usage.calls for usage in WebServiceUsage.objects.all()} == {
        owner.pk: 1,
        another_account.pk: 1,
    }
    assert Run.objects.filter(automation=theirs, status="succeeded").count() == 1
