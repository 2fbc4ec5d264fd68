"""An automation's webhook and web service URLs: PublicKey rows (publickeys/), issued on create, reissued on demand."""

import pytest
from django.db import connection

from automations import selectors, services
from hooks import selectors as hook_selectors
from publickeys.models import PublicKey

pytestmark = pytest.mark.django_db


def key_of(url):
    return url.split("automation-", 1)[1]


def service_key_of(url):
    return url.split("webservice-", 1)[1]


def test_a_new_automation_has_a_webhook_and_a_web_service_key(make_automation):
    automation = make_automation([])
    assert sorted(PublicKey.objects.filter(target_id=automation.pk).values_list("purpose", flat=True)) == [
        "web_service",
        "webhook",
    ]
    assert hook_selectors.automation_id_for_hook_key(key_of(services.hook_url(automation))) == automation.pk
    assert selectors.automation_for_web_service_key(service_key_of(services.web_service_url(automation))) == automation


def test_no_automation_column_holds_a_key(make_automation):
    automation = make_automation([])
    hook, service = key_of(services.hook_url(automation)), service_key_of(services.web_service_url(automation))
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM automations_automation")
        row = " ".join(map(str, cursor.fetchone()))
    assert hook not in row and service not in row


def test_another_secret_neither_finds_nor_shows_the_urls(make_automation, settings):
    automation = make_automation([])
    hook = key_of(services.hook_url(automation))
    settings.URL_KEY_SECRET = "a-different-secret"
    assert hook_selectors.automation_id_for_hook_key(hook) is None
    assert services.hook_url(automation) is None
    assert services.web_service_url(automation) is None


def test_issuing_new_urls_retires_the_old_ones(make_automation):
    automation = make_automation([])
    old_hook, old_service = key_of(services.hook_url(automation)), service_key_of(services.web_service_url(automation))
    services.issue_new_urls(automation=automation)
    assert hook_selectors.automation_id_for_hook_key(old_hook, fresh=True) is None
    assert selectors.automation_for_web_service_key(old_service) is None
    assert hook_selectors.automation_id_for_hook_key(key_of(services.hook_url(automation))) == automation.pk
    assert selectors.automation_for_web_service_key(service_key_of(services.web_service_url(automation))) == automation
