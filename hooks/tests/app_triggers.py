"""The catalog, connections and listening automations the fan-out tests share (hooks/tests/test_fan_out.py and its
end-to-end twin, tests/e2e/test_fan_out_end_to_end.py): an app of each delivery mode, and automations that record
the deliveries their own condition lets through."""

from automations import services as automation_services
from catalog.models import App
from conftest import app_doc
from connections import services as connection_services
from connections.models import Connection


def app_trigger(key: str, mode: str) -> dict:
    """A trigger of an import document, delivered per connection, at a shared endpoint, or by hand."""
    return {
        "key": key,
        "name": key.replace("_", " ").title(),
        "description": "When it happens.",
        "endpoint": "https://internal.example/hooks",
        "http_method": "POST",
        "delivery_mode": mode,
    }


def make_trigger_apps(make_catalog) -> dict[str, App]:
    """acorn-crm (a URL per connection), birch-chat (one endpoint routed by the body) and cedar-desk (one endpoint
    routed by a header), by slug."""
    make_catalog(
        app_doc(
            "acorn-crm",
            auth_type="none",
            triggers=[app_trigger("new_lead", "per_connection"), app_trigger("by_hand", "manual")],
        ),
        app_doc(
            "birch-chat",
            auth_type="none",
            auth_config={"routing": {"body_path": "account.id"}},
            triggers=[app_trigger("new_message", "shared_endpoint")],
        ),
        app_doc(
            "cedar-desk",
            auth_type="none",
            auth_config={"routing": {"header": "X-Account-Id"}},
            triggers=[app_trigger("new_ticket", "shared_endpoint")],
        ),
    )
    return {app.slug: app for app in App.objects.all()}


def connect(owner, app, label="Sales", account=""):
    """A connection to the app, to the account when given (as a test call's answer would name it)."""
    connection = connection_services.connect(owner=owner, app=app, label=label)
    if account:
        Connection.objects.filter(pk=connection.pk).update(account_id=account)
    return connection


def listening(owner, connection, trigger, steps, *, enabled=True, name="Listener", settings=None):
    definition = {
        "trigger": {"type": "app_trigger", "app": connection.app.slug, "trigger": trigger, "connection": connection.pk},
        "steps": steps,
        "settings": settings or {},
    }
    return automation_services.create_automation(owner=owner, name=name, definition=definition, enabled=enabled)


def only_when(n: int) -> list[dict]:
    """Steps that record the delivery's n in the table seen-{n}, once the automation's own condition lets it
    through (n greater than the automation's)."""
    return [
        {"id": "only", "kind": "condition", "all": [{"left": "{{trigger.body.n}}", "op": "greater_than", "right": n}]},
        {
            "id": "row",
            "kind": "lookup_rows",
            "table": f"seen-{n}",
            "action": "add",
            "values": {"n": "{{trigger.body.n}}"},
        },
    ]
