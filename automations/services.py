"""Writes on automations: create, change, turn on and off, reset, runs and web service usage."""

from datetime import date

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from automations import definition as definitions
from automations import deletion, references, runs, signals, triggers
from automations.exceptions import NotOff, QuotaExceeded
from automations.models import Automation, LookupRow, LookupTable, Run, WebServiceUsage
from automations.triggers import TriggerRefused
from publickeys import selectors as key_selectors
from publickeys import services as key_services
from publickeys.models import PublicKey


def url_purposes() -> list[str]:
    """The purposes of every URL a trigger type gives an automation (its Trigger's URLS), in a fixed order."""
    return sorted({purpose for trigger in triggers.types().values() for purpose in trigger.URLS})


ENDED_BY_RESET = "the automation was reset (Processing > Reset)"


def _stored(document: dict, owner_id: int) -> dict:
    """The validated document as stored: its name lives on the automation, not in the definition. The connections its
    app steps name must be the owner's, to the apps they name."""
    definitions.validate(document)
    if problems := references.owner_errors(document, owner_id):
        raise definitions.InvalidDefinition(problems)
    return {key: value for key, value in document.items() if key != "name"}


def create_automation(*, owner, name: str, definition: dict, enabled: bool = False) -> Automation:
    """A new automation with fresh URL keys; the definition is validated first.

    enabled: turned on once created. If its trigger refuses (TriggerRefused,
    raised with the automation as .automation), it is created and left off.
    """
    with transaction.atomic():
        stored = _stored(definition, owner.pk)
        automation = Automation.objects.create(owner=owner, name=name, definition=stored, enabled=False)
        _issue_urls(automation)
    if enabled:
        try:
            turn_on(automation=automation)
        except TriggerRefused as refusal:
            refusal.automation = automation
            raise
    return automation


def update_automation(
    *, automation: Automation, name: str | None = None, definition: dict | None = None, owner=None
) -> Automation:
    """Change the name or the definition. A new trigger type (or, for a kind that says so, new settings of its
    trigger) gets its URLs; if the automation is on, the new trigger is activated, then the old one deactivated.
    A refusal (TriggerRefused) leaves everything unchanged: the new trigger raised it before the old one was
    told anything.

    A new trigger that calls another app to activate (a self-registering one) makes that call first, outside the
    transaction (Trigger.prepare), when the automation is on as the caller read it.

    The row is read again under a lock and only the fields named are written: the caller's instance may be
    seconds old (an MCP tool, the import command), and an automation turned on or off meanwhile keeps that
    state, its trigger told of it by the change that made it.
    """
    if definition is not None and automation.enabled:
        owner_id = owner.pk if owner is not None else automation.owner_id
        provisional = Automation(pk=automation.pk, owner_id=owner_id, definition=_stored(definition, owner_id))
        triggers.of(provisional).prepare(provisional)
    return _updated(automation=automation, name=name, definition=definition, owner=owner)


@transaction.atomic
def _updated(*, automation: Automation, name: str | None, definition: dict | None, owner) -> Automation:
    current = Automation.objects.select_for_update().get(pk=automation.pk)
    before, before_settings = triggers.of(current), current.definition.get("trigger") or {}
    changed = ["updated_at"]
    for field, value in (("owner", owner), ("definition", definition), ("name", name)):
        if value is not None:
            setattr(current, field, _stored(value, current.owner_id) if field == "definition" else value)
            changed.append(field)
    current.save(update_fields=changed)
    after = triggers.of(current)
    if after is not before or after.changed(before_settings, current.definition.get("trigger") or {}):
        _issue_urls(current, missing_only=True)
        if current.enabled:
            after.activate(current)
            before.deactivate(current)
    for field in ("definition", "name", "owner_id", "enabled", "updated_at"):
        setattr(automation, field, getattr(current, field))
    signals.send_on_commit(signals.updated, automation)
    return automation


def turn_on(*, automation: Automation) -> None:
    """On: the trigger is activated and kept deliveries are replayed in arrival order (by hooks, once this commits).

    Raises TriggerRefused, with the automation left off, when the trigger refuses. A trigger that calls another
    app (a self-registering one) calls it first, outside the turn-on's transaction (Trigger.prepare): call this
    outside any transaction, so that the call holds no lock (admin turns such an automation on once its own
    transaction has committed).
    """
    triggers.of(automation).prepare(automation)
    _turned_on(automation)


@transaction.atomic
def _turned_on(automation: Automation) -> None:
    changed = Automation.objects.filter(pk=automation.pk, enabled=False).update(enabled=True, updated_at=timezone.now())
    if changed:
        automation.enabled = True
        automation.definition = Automation.objects.values_list("definition", flat=True).get(pk=automation.pk)
        if gone := references.owner_errors(automation.definition, automation.owner_id):
            # A connection deleted since the definition was saved: every run would fail at that step.
            automation.enabled = False
            raise TriggerRefused("reconnect or change its app steps first: " + "; ".join(gone))
        try:
            triggers.of(automation).activate(automation)
        except TriggerRefused:
            automation.enabled = False
            raise
        signals.send_on_commit(signals.turned_on, automation)
    automation.enabled = True


@transaction.atomic
def turn_off(*, automation: Automation) -> None:
    """Off: the trigger is deactivated; deliveries are kept until it is turned on again."""
    changed = Automation.objects.filter(pk=automation.pk, enabled=True).update(enabled=False, updated_at=timezone.now())
    automation.enabled = False
    if changed:  # the trigger of the row as it is now (locked by the update), not as the caller last read it
        automation.definition = Automation.objects.values_list("definition", flat=True).get(pk=automation.pk)
        triggers.of(automation).deactivate(automation)
        signals.send_on_commit(signals.turned_off, automation)


@transaction.atomic
def reset(*, automation: Automation) -> None:
    """Processing > Reset (SPEC 3): trigger state and This-automation rows cleared, unprocessed deliveries discarded.

    Its waiting runs end too (runs.end_waiting), queued retries among them:
    a reset starts the automation afresh, and a decision or a form sent for
    the old state should not act on the new one.
    """
    automation = Automation.objects.select_for_update().get(pk=automation.pk)
    if automation.enabled:
        raise NotOff("turn the automation off before resetting it")
    automation.trigger_state = {}
    # A run going on now finishes its attempt, and makes no retry (runs.settle).
    automation.reset_after_run = Run.objects.aggregate(last=Max("pk"))["last"] or 0
    automation.save(update_fields=["trigger_state", "reset_after_run", "updated_at"])
    list(LookupTable.objects.filter(automation=automation).select_for_update())  # count rows first, as every writer
    LookupRow.objects.filter(automation=automation).delete()
    LookupTable.objects.filter(automation=automation).delete()
    runs.end_waiting(automation_id=automation.pk, reason=ENDED_BY_RESET)
    signals.send_on_commit(signals.reset, automation)


def delete_automation(*, automation: Automation) -> None:
    """Deleted: its deliveries, runs and lookup rows go with it, and its URLs answer 404.

    Wins every race with the intake and the workers (automations/deletion.py):
    it is turned off first, in a commit of its own (its trigger deactivated if
    it was on), then deleted (its trigger's delete called just before the row
    goes). Call it outside a transaction, as admin does.
    """
    deletion.delete(automation_id=automation.pk)


@transaction.atomic
def issue_new_urls(*, automation: Automation, purposes: list[str] | None = None) -> None:
    """New keys for its URLs (those of purposes only, when given), for URLs shown where they should not have been:
    the old ones answer 404.

    A process that remembered an old webhook key still takes it for up to
    hooks.selectors.HOOK_KEY_MEMORY_SECONDS.
    """
    _issue_urls(Automation.objects.select_for_update().get(pk=automation.pk), only=purposes)
    signals.send_on_commit(signals.updated, automation)


def _issue_urls(automation: Automation, *, missing_only: bool = False, only: list[str] | None = None) -> None:
    """Keys for the URLs its trigger type has (its Trigger's URLS); those of other purposes are retired."""
    wanted = triggers.of(automation).URLS
    live = key_selectors.live_purposes(target=automation)
    for purpose in url_purposes() if only is None else [purpose for purpose in url_purposes() if purpose in only]:
        if purpose not in wanted:
            key_services.retire_key(purpose=purpose, target=automation)
        elif not (missing_only and purpose in live):
            key_services.issue_key(purpose=purpose, target=automation)


def form_url(automation: Automation) -> str | None:
    """The hosted form's URL (on the owner's white-label domain when it has one, unless it requires sign-in, which
    lives on BASE_URL); None without a form key."""
    on_base = bool(automation.definition.get("trigger", {}).get("require_sign_in"))
    return _page_url(automation, PublicKey.Purpose.FORM, "form", on_base=on_base)


def _page_url(automation: Automation, purpose: str, path: str, *, on_base: bool = False) -> str | None:
    key = key_selectors.key_of(purpose=purpose, target=automation)
    if key is None:
        return None
    # The pages answer with the owner's white-label domain for a hosted form or chat widget (signals.url_origin).
    origin = None if on_base else signals.answer(signals.url_origin, purpose=purpose, owner_id=automation.owner_id)
    origin = origin or settings.BASE_URL
    return f"{origin}/{path}/{key}"


def hook_url(automation: Automation) -> str | None:
    """The automation's webhook URL; None when its key was sealed under another URL_KEY_SECRET."""
    return key_selectors.url_of(purpose=PublicKey.Purpose.WEBHOOK, target=automation)


def web_service_url(automation: Automation) -> str | None:
    """The automation's web service URL; None when its key was sealed under another URL_KEY_SECRET."""
    return key_selectors.url_of(purpose=PublicKey.Purpose.WEB_SERVICE, target=automation)


def chat_widget_url(automation: Automation) -> str | None:
    """The chat widget's URL (a chat trigger's; on the owner's white-label domain when it has one); None without."""
    return _page_url(automation, PublicKey.Purpose.CHAT_WIDGET, "webchat")


def public_urls(automation: Automation) -> list[tuple[str, str]]:
    """The URLs its trigger was given, labelled. Every public URL of an automation, the pages' own among them
    (approval link, chat embed tag), is listed by interfaces/public_urls.py, which builds on these."""
    labelled = (
        ("webhook URL", hook_url(automation)),
        ("web service URL", web_service_url(automation)),
        ("form URL", form_url(automation)),
        ("chat widget URL", chat_widget_url(automation)),
    )
    return [(label, url) for label, url in labelled if url]


def _this_month() -> date:
    today = timezone.now().date()
    return date(today.year, today.month, 1)


def uncount_web_service_call(*, owner_id: int) -> None:
    """Give back a call counted by count_web_service_call that failed on our side: a caller pays for answers only."""
    WebServiceUsage.objects.filter(owner_id=owner_id, month=_this_month(), calls__gt=0).update(calls=F("calls") - 1)


def count_web_service_call(*, owner_id: int) -> None:
    """Count one call against the owner's monthly quota, or raise QuotaExceeded; race-free under concurrency."""
    month = _this_month()
    quota = settings.WEB_SERVICE_MONTHLY_QUOTA
    for _ in range(2):
        counted = WebServiceUsage.objects.filter(owner_id=owner_id, month=month, calls__lt=quota).update(
            calls=F("calls") + 1
        )
        if counted:
            return
        if WebServiceUsage.objects.filter(owner_id=owner_id, month=month).exists() or quota == 0:
            raise QuotaExceeded()
        try:
            with transaction.atomic():
                WebServiceUsage.objects.create(owner_id=owner_id, month=month, calls=1)
            return
        except IntegrityError:  # another call created the month's row first; count on it
            continue
    raise QuotaExceeded()
