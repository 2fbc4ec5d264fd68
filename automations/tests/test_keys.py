"""URL keys are credentials (DESIGN.md contract 3)."""
import pytest
from django.db import connection

from automations import keys, selectors, services
from hooks import selectors as hook_selectors

pytestmark = pytest.mark.django_db


def key_of(url):
    return url.split("automation-", 1)[1]


def test_keys_carry_at_least_128_random_bits():
    issued = {keys.new_key() for _ in range(1000)}
    assert len(issued) == 1000
    assert all(len(key) >= 22 for key in issued)  # 22 URL-safe characters hold 132 bits; ours hold 192
    assert keys.KEY_BYTES * 8 >= 128


def test_the_database_holds_no_working_key(make_automation):
    automation = make_automation([])
    hook, service = key_of(services.hook_url(automation)), services.web_service_url(automation).split("webservice-", 1)[1]
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM automations_automation")
        row = " ".join(map(str, cursor.fetchone()))
    assert hook not in row and service not in row
    assert hook_selectors.automation_id_for_hook_key(hook) == automation.pk
    assert selectors.automation_for_web_service_key(service) == automation


def test_another_secret_neither_finds_nor_reveals_the_keys(make_automation, settings):
    automation = make_automation([])
    hook = key_of(services.hook_url(automation))
    settings.URL_KEY_SECRET = "a-different-secret"
    assert hook_selectors.automation_id_for_hook_key(hook) is None
    assert services.hook_url(automation) is None


def test_lookalike_keys_find_nothing(make_automation):
    automation = make_automation([])
    hook = key_of(services.hook_url(automation))
    for lookalike in (hook[:-1], hook + "a", hook.swapcase(), " " + hook, hook * 3, "", "x" * 10_000):
        assert hook_selectors.automation_id_for_hook_key(lookalike) is None, lookalike


def test_reissuing_keys_retires_the_old_urls(make_automation):
    automation = make_automation([])
    old = key_of(services.hook_url(automation))
    automation.issue_keys()
    automation.save()
    assert hook_selectors.automation_id_for_hook_key(old) is None
    assert hook_selectors.automation_id_for_hook_key(key_of(services.hook_url(automation))) == automation.pk
