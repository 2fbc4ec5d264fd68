"""Migration 0004: webhook and web service keys move to PublicKey rows, and every URL issued before still answers."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from automations import services
from automations.models import Automation
from publickeys import crypto
from publickeys.models import PublicKey
from publickeys.selectors import target_id_for_key

BEFORE = [("automations", "0003_run_lifecycle")]


def migrate(targets=None) -> MigrationExecutor:
    """Migrate the test database to targets (the latest state of every app when None); the executor it used."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    return executor


@pytest.fixture
def before_the_move():
    """The historical models of the schema before 0004; the database is migrated forward again afterwards."""
    executor = migrate(BEFORE)
    yield executor.loader.project_state(BEFORE).apps
    migrate()


def issue_the_old_way(apps, name: str):
    """An automation as create_automation made it before 0004: its keys in its own four columns."""
    owner, _ = apps.get_model("auth", "User").objects.get_or_create(username="owner-before")
    hook, service = crypto.new_key(), crypto.new_key()
    automation = apps.get_model("automations", "Automation").objects.create(
        owner=owner,
        name=name,
        definition={"trigger": {"type": "webhook"}, "steps": [], "settings": {}},
        hook_key_digest=crypto.digest(hook),
        hook_key_sealed=crypto.seal(hook),
        webservice_key_digest=crypto.digest(service),
        webservice_key_sealed=crypto.seal(service),
    )
    return automation.pk, hook, service


@pytest.mark.django_db(transaction=True)
def test_urls_issued_before_the_move_still_answer_after_it(before_the_move, hooks_client, settings):
    settings.HOOKS_URL = "http://testserver"
    issued = [issue_the_old_way(before_the_move, f"issued before {n}") for n in range(3)]
    migrate()
    for pk, hook, service in issued:
        assert target_id_for_key(purpose=PublicKey.Purpose.WEBHOOK, key=hook) == pk
        assert target_id_for_key(purpose=PublicKey.Purpose.WEB_SERVICE, key=service) == pk
        automation = Automation.objects.get(pk=pk)
        assert services.hook_url(automation) == f"http://testserver/automation-{hook}"  # the owner sees the same URL
        assert services.web_service_url(automation) == f"http://testserver/webservice-{service}"
    pk, hook, _ = issued[0]
    services.turn_on(automation=Automation.objects.get(pk=pk))
    for key, status in ((hook, 200), (crypto.new_key(), 404)):
        answer = hooks_client.post(f"/automation-{key}", data=b"{}", content_type="application/json")
        assert answer.status_code == status


@pytest.mark.django_db(transaction=True)
def test_migrating_back_puts_the_keys_back_in_their_columns(before_the_move):
    pk, hook, service = issue_the_old_way(before_the_move, "round trip")
    migrate()
    services.issue_new_urls(automation=Automation.objects.get(pk=pk))  # a retired key of each purpose, too
    new_hook = services.hook_url(Automation.objects.get(pk=pk)).rsplit("automation-", 1)[1]
    executor = migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps.get_model("automations", "Automation").objects.get(pk=pk)
    assert old.hook_key_digest == crypto.digest(new_hook)
    assert crypto.unseal(old.hook_key_sealed) == new_hook
    assert old.webservice_key_digest != crypto.digest(service)
    assert not PublicKey.objects.exists()
