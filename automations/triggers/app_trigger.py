"""App trigger: one of a catalog app's triggers, on one of the owner's connections to that app (SPEC 6.2).

    {"type": "app_trigger", "app": "acorn-crm", "trigger": "new_lead", "connection": 12}

The trigger's operation says how its deliveries arrive (its delivery_mode,
catalog.models.Operation.DeliveryMode): manual (the owner pastes the
automation's webhook URL into the other app), self_registering (the service
creates that webhook in the other app when the automation turns on),
per_connection (one URL per connection, every automation on it runs) or
shared_endpoint (one URL per app, routed to its connection). Whatever the
mode, the automation keeps a webhook URL of its own, as every webhook
automation has, so that its owner can send it a test delivery by hand.
A self-registering trigger's webhook is created in the other app before the
transaction that turns the automation on, and removed after the one that
turns it off (connections/registrations.py: the outbox, the conventions and
the hourly cleanup; docs/connections.md, "App triggers").
A trigger without a delivery mode is a polling trigger, which this service
does not run: saving one is refused with that reason. The connection is
checked against the owner when the definition is saved and when the
automation turns on (automations/references.py).
"""

from automations.triggers.base import Trigger, TriggerRefused

SETTINGS_SCHEMA = {
    "type": "object",
    "required": ["app", "trigger", "connection"],
    "properties": {
        "app": {"type": "string", "minLength": 1, "maxLength": 64},
        "trigger": {"type": "string", "minLength": 1, "maxLength": 100},
        "connection": {"type": "integer", "minimum": 1},
    },
}


def operation_of(settings: dict):
    """The catalog trigger the settings name, or None when the app has none by that key."""
    from catalog.models import Operation

    return (
        Operation.objects.select_related("app")
        .filter(app__slug=settings.get("app"), kind=Operation.Kind.TRIGGER, key=settings.get("trigger"))
        .first()
    )


def delivery_mode(automation) -> str | None:
    """The delivery mode of the automation's app trigger, or None when it has none (or its trigger is gone)."""
    settings = automation.definition.get("trigger") or {}
    if settings.get("type") != AppTrigger.TYPE:
        return None
    operation = operation_of(settings)
    return operation.delivery_mode or None if operation else None


class AppTrigger(Trigger):
    TYPE = "app_trigger"
    SCHEMA = SETTINGS_SCHEMA
    URLS = ("webhook",)

    def errors(self, settings: dict) -> list[tuple[tuple, str]]:
        """The trigger must be one the catalog lists for that app, with a delivery mode (a webhook trigger)."""
        from catalog.models import Operation

        kinds = set(
            Operation.objects.filter(app__slug=settings["app"], key=settings["trigger"]).values_list("kind", flat=True)
        )
        if not kinds:
            return [(("trigger",), f"{settings['app']!r} has no trigger {settings['trigger']!r} in the catalog")]
        if Operation.Kind.TRIGGER not in kinds:
            return [(("trigger",), f"{settings['trigger']!r} is an action of {settings['app']!r}, not a trigger")]
        if not operation_of(settings).delivery_mode:
            return [
                (
                    ("trigger",),
                    f"{settings['trigger']!r} of {settings['app']!r} is a polling trigger, which cannot start "
                    "automations here: choose one of the app's webhook triggers",
                )
            ]
        return []

    def calls_out(self, automation) -> bool:
        return delivery_mode(automation) == "self_registering"

    def prepare(self, automation) -> None:
        from connections import registrations

        try:
            registrations.ensure(automation)
        except registrations.Refused as refused:
            raise TriggerRefused(str(refused)) from None

    def changed(self, before: dict, after: dict) -> bool:
        """Another app, trigger or connection is another registration."""
        return [before.get(name) for name in SETTINGS_SCHEMA["required"]] != [
            after.get(name) for name in SETTINGS_SCHEMA["required"]
        ]

    def activate(self, automation) -> None:
        """A self-registering trigger's registration must be there (made by prepare, outside this transaction)."""
        from connections import registrations

        if not registrations.hold(automation):
            need = registrations.need_of(automation)
            app = need.connection.app.name if need else automation.definition["trigger"].get("app")
            raise TriggerRefused(
                f"its webhook is not registered in {app} yet (its trigger or URL changed meanwhile): turn the "
                "automation off, then on again"
            )

    def deactivate(self, automation) -> None:
        """Registrations it no longer needs are removed from the other app once this commits."""
        from connections import registrations

        registrations.release(automation)


TRIGGER = AppTrigger()
