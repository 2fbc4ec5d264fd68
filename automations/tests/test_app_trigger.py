"""The app_trigger kind: a catalog app's webhook trigger on one of the owner's connections, checked on save."""

import pytest

from automations import services
from automations.definition import InvalidDefinition
from automations.triggers import TriggerRefused, app_trigger
from conftest import app_doc
from connections import services as connection_services
from hooks.tests.app_triggers import app_trigger as trigger_doc

pytestmark = pytest.mark.django_db


@pytest.fixture
def crm(make_catalog):
    from catalog.models import App

    make_catalog(
        app_doc(
            "acorn-crm",
            auth_type="none",
            triggers=[
                trigger_doc("new_thing", "manual"),
                trigger_doc("polled_thing", ""),
                trigger_doc("new_lead", "per_connection"),
            ],
        ),
        app_doc("birch-mail", auth_type="none"),
    )
    return App.objects.get(slug="acorn-crm")


@pytest.fixture
def connection(owner, crm):
    return connection_services.connect(owner=owner, app=crm, label="Sales")


def definition(connection_id: int, **trigger) -> dict:
    settings = {"type": "app_trigger", "app": "acorn-crm", "trigger": "new_thing", "connection": connection_id}
    return {"trigger": {**settings, **trigger}, "steps": []}


def test_an_automation_on_an_app_trigger_is_saved_with_a_webhook_url_and_its_delivery_mode(owner, connection):
    automation = services.create_automation(owner=owner, name="Leads", definition=definition(connection.pk))
    assert services.hook_url(automation)
    assert app_trigger.delivery_mode(automation) == "manual"
    automation.definition["trigger"]["trigger"] = "new_lead"
    assert app_trigger.delivery_mode(automation) == "per_connection"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"trigger": "nothing"}, "$.trigger.trigger: 'acorn-crm' has no trigger 'nothing' in the catalog"),
        ({"trigger": "create_thing"}, "$.trigger.trigger: 'create_thing' is an action of 'acorn-crm', not a trigger"),
        ({"trigger": "polled_thing"}, "is a polling trigger"),
        ({"connection": "12"}, "$.trigger.connection: '12' is not of type 'integer'"),
        ({"connection": None, "trigger": "new_thing"}, "$.trigger.connection"),
    ],
)
def test_a_trigger_the_catalog_does_not_list_as_a_webhook_trigger_is_refused_with_its_path(
    owner, connection, change, message
):
    with pytest.raises(InvalidDefinition) as refused:
        services.create_automation(owner=owner, name="Leads", definition=definition(connection.pk, **change))
    assert any(message in problem for problem in refused.value.errors), refused.value.errors


def test_another_owners_connection_or_one_to_another_app_is_refused(owner, another_account, crm, connection):
    from catalog.models import App

    theirs = connection_services.connect(owner=another_account, app=crm, label="Theirs")
    mail = connection_services.connect(owner=owner, app=App.objects.get(slug="birch-mail"), label="Mail")
    for connection_id in (theirs.pk, mail.pk):
        with pytest.raises(InvalidDefinition) as refused:
            services.create_automation(owner=owner, name="Leads", definition=definition(connection_id))
        assert refused.value.errors == [
            f"$.trigger.connection: {connection_id} is not one of your connections to 'acorn-crm'"
        ]


def test_turning_on_after_its_connection_was_deleted_is_refused_and_it_stays_off(owner, connection):
    automation = services.create_automation(owner=owner, name="Leads", definition=definition(connection.pk))
    connection_services.delete(connection=connection)
    with pytest.raises(TriggerRefused, match=r"\$\.trigger\.connection"):
        services.turn_on(automation=automation)
    automation.refresh_from_db()
    assert automation.enabled is False
