"""Trigger: what every trigger kind has, with lifecycle hooks that do nothing unless a kind needs them."""


class TriggerRefused(Exception):
    """The trigger cannot be activated (say, another app refused to register a webhook); the message says why."""


class Trigger:
    """One trigger kind. A subclass sets TYPE and URLS, SCHEMA if it has settings, and overrides only what it does.

    SCHEMA is the JSON schema of the trigger's own settings (every field of
    `trigger` but `type`); URLS are the purposes of the public keys
    (publickeys.models.PublicKey.Purpose) an automation with this trigger is
    given. The services call the hooks inside the transaction that decides
    the change, so what a hook writes commits or rolls back with it. That
    transaction holds the automation's row locked, and a webhook's insert
    waits on that lock: a hook that must call another app (a
    self-registering trigger) needs its call outside it, with a record to
    retry or undo, not a network call under the lock.
    """

    TYPE: str
    SCHEMA: dict = {"type": "object", "properties": {}}
    URLS: tuple[str, ...] = ()

    def errors(self, settings: dict) -> list[tuple[tuple, str]]:
        """Checks the schema cannot state, run once it passed: (path inside `trigger`, message) pairs."""
        return []

    def calls_out(self, automation) -> bool:
        """Whether turning the automation on calls another app (prepare does): its caller must then turn it on
        outside any transaction, as admin does once its own has committed."""
        return False

    def prepare(self, automation) -> None:
        """Before the transaction that turns it on (or changes its trigger while on), outside any lock: the call to
        another app, its outcome recorded in a commit of its own for activate to find. TriggerRefused says why not."""

    def changed(self, before: dict, after: dict) -> bool:
        """Whether an automation that is on, its trigger's settings changed from before to after (same type), must
        have the new settings activated and the old deactivated."""
        return False

    def activate(self, automation) -> None:
        """The automation is turning on (or, while on, took this trigger). TriggerRefused keeps it as it was."""

    def deactivate(self, automation) -> None:
        """The automation is turning off (deletion included) or, while on, gave this trigger up for another."""

    def delete(self, automation) -> None:
        """The automation's row is about to be deleted; it is off by then (deactivated first if it was on)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} trigger {self.TYPE!r}>"
