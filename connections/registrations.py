"""Webhooks this service creates in other apps for self-registering triggers: subscribe, remove, and the cleanup.

The call to the other app never happens under the automation's row lock
(automations/triggers/base.py: a webhook's insert waits on that lock), so
each change is an outbox in two commits:

- Turning on: ensure() subscribes first, outside any transaction, and
  records the registration in a commit of its own; the turn-on transaction
  then only checks that the record is there (hold()). If the app refuses,
  nothing is recorded and the refusal, in the app's words, reaches whoever
  turned the automation on. A record left behind by a turn-on that failed
  afterwards is one "no automation needs", which the cleanup removes.
- Turning off, deleting, changing the trigger: release() marks the records
  "removing" inside the transaction that decides it, and remove() calls the
  app once it has committed. A removal that fails keeps its record as
  "removal_failed", tried again by the hourly cleanup with exponential
  backoff until the app answers.

The conventions an operation follows are in docs/connections.md ("App
triggers"): subscribe is the operation's method and endpoint with its
request template rendered with {{input.webhook_url}}; the app's id of the
registration is its answer's "id"; removing it is DELETE endpoint/{id}.
"""

import hashlib
import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from connections.models import Connection, Registration
from publickeys.redaction import redact

logger = logging.getLogger(__name__)

# A removal under way holds its record this long; one whose process was lost is tried again after it.
LEASE = timedelta(minutes=10)
# A record this young of an automation that is off may belong to a turn-on under way: the cleanup leaves it.
GRACE = timedelta(minutes=10)
LAST_RETRY = timedelta(hours=24)
BATCH = 200
ID_CHARS = 200


class Refused(Exception):
    """The app did not register the webhook; the message names the app and says why, in its words when it answered."""


@dataclass(frozen=True)
class Need:
    """What an automation on a self-registering trigger needs registered."""

    connection: Connection
    operation: object  # catalog.models.Operation
    url: str | None

    def matches(self) -> dict:
        return {
            "connection": self.connection,
            "operation": self.operation,
            "url_digest": digest(self.url) if self.url else "",
        }


def digest(url: str) -> str:
    """What a record keeps of the URL registered: its SHA-256, enough to tell it from another, never the key."""
    return hashlib.sha256(url.encode()).hexdigest()


def need_of(automation) -> Need | None:
    """What the automation's definition (as given) needs registered; None unless it is a self-registering app
    trigger on one of its owner's connections to that app."""
    from catalog.models import Operation
    from publickeys import selectors
    from publickeys.models import PublicKey

    settings_ = automation.definition.get("trigger") if isinstance(automation.definition, dict) else None
    if not isinstance(settings_, dict) or settings_.get("type") != "app_trigger":
        return None
    app, key, connection_id = settings_.get("app"), settings_.get("trigger"), settings_.get("connection")
    if not isinstance(app, str) or not isinstance(key, str) or type(connection_id) is not int:
        return None
    operation = (
        Operation.objects.select_related("app").filter(app__slug=app, kind=Operation.Kind.TRIGGER, key=key).first()
    )
    if operation is None or operation.delivery_mode != Operation.DeliveryMode.SELF_REGISTERING:
        return None
    connection = (
        Connection.objects.select_related("app")
        .filter(pk=connection_id, owner_id=automation.owner_id, app=operation.app)
        .first()
    )
    if connection is None:
        return None
    url = selectors.url_of(purpose=PublicKey.Purpose.WEBHOOK, target=automation)  # automations.services.hook_url
    return Need(connection=connection, operation=operation, url=url)


def ensure(automation) -> Registration | None:
    """The automation's registration in the other app: ours already there (active, or whose removal failed, taken
    back), else a new one the app makes now. Call it outside any transaction: the call is made, and the record
    committed, before the turn-on's transaction locks the automation. Refused when the app does not register it."""
    from connections import keys, services
    from connectors import calls

    need = need_of(automation)
    if need is None or need.url is None:
        return None  # nothing to register, or nothing that can be (hold() then refuses, saying why)
    if (found := _reused(automation, need)) is not None:
        return found
    connection = need.connection
    if connection.state != Connection.State.CONNECTED:
        raise Refused(f"the connection “{connection.label}” to {connection.app.name} needs reconnection")
    credential = keys.unseal(connection.credential_sealed) if connection.credential_sealed else None
    try:
        answer = calls.perform(
            calls.operation_of(connection.app, need.operation),
            credential=credential,
            data={"webhook_url": need.url},
            seconds=settings.HTTP_STEP_TIMEOUT_SECONDS,
        )
    except calls.CallFailed as failed:
        if failed.output and failed.output["status"] == 401 and credential:
            services.needs_reconnection(connection=connection, problem=str(failed))
        # An app may echo the URL it was given: its key is a password, shown to no one (admin's staff included).
        raise Refused(redact(f"{connection.app.name} did not register the webhook: {failed}")) from None
    remote_id = _id_in(answer["body"])
    if remote_id is None:
        raise Refused(
            f"{connection.app.name} answered {answer['status']} without the id of the webhook it registered, so it "
            "could not be removed later: ask the service's staff to check the app's trigger"
        )
    return Registration.objects.create(
        automation_id=automation.pk,
        connection=connection,
        operation=need.operation,
        url_digest=digest(need.url),
        remote_id=remote_id,
    )


def _reused(automation, need: Need) -> Registration | None:
    """Ours for the same automation, connection, trigger and URL: an active one, or one whose removal failed (the
    app may well still have it), taken back rather than adding a second."""
    matching = Registration.objects.filter(automation_id=automation.pk, **need.matches())
    found = matching.filter(state=Registration.State.ACTIVE).first()
    if found is not None:
        return found
    for candidate in matching.filter(state=Registration.State.REMOVAL_FAILED).order_by("-pk"):
        taken = Registration.objects.filter(pk=candidate.pk, state=Registration.State.REMOVAL_FAILED).update(
            state=Registration.State.ACTIVE, next_try_at=None, updated_at=timezone.now()
        )
        if taken:
            candidate.refresh_from_db()
            return candidate
    return None


def _id_in(body) -> str | None:
    """The app's id of the registration: its answer's "id" (a string or an integer), or "data"'s."""
    for holder in (body, body.get("data") if isinstance(body, dict) else None):
        value = holder.get("id") if isinstance(holder, dict) else None
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | str):
            text = str(value)
            if text and len(text) <= ID_CHARS and text.isprintable():
                return text
    return None


def hold(automation) -> bool:
    """Inside the turn-on transaction: whether the registration the automation needs is there, active. Its row is
    locked until that transaction ends and marked as seen, so the cleanup neither removes it meanwhile nor later
    takes it for one whose automation changed since (see cleanup)."""
    need = need_of(automation)
    if need is None:
        return True
    if need.url is None:
        return False
    found = (
        Registration.objects.select_for_update()
        .filter(automation_id=automation.pk, state=Registration.State.ACTIVE, **need.matches())
        .first()
    )
    if found is None:
        return False
    Registration.objects.filter(pk=found.pk).update(updated_at=timezone.now())
    return True


def release(automation) -> None:
    """Inside the transaction that turns the automation off, deletes it or changes its trigger: its registrations it
    no longer needs (all, unless it stays on) are marked removing, and removed from the app once that commits."""
    need = need_of(automation) if automation.enabled else None
    unneeded = Registration.objects.filter(automation_id=automation.pk, state=Registration.State.ACTIVE)
    if need is not None:
        unneeded = unneeded.exclude(**need.matches())
    ids = list(unneeded.select_for_update().values_list("pk", flat=True))
    if ids:
        Registration.objects.filter(pk__in=ids).update(
            state=Registration.State.REMOVING, next_try_at=timezone.now() + LEASE, updated_at=timezone.now()
        )
        transaction.on_commit(lambda: remove(ids))


def release_connection(connection: Connection) -> int:
    """Before the connection is deleted, outside any transaction: the webhooks still registered through it for no
    automation that is on are removed from the app now, while its credential exists to do it. Once the
    connection is gone a record can only say to remove the webhook by hand. Returns how many the app confirmed;
    a failure is kept as removal_failed, as any is."""
    with transaction.atomic():
        ids = list(
            Registration.objects.select_for_update(skip_locked=True, of=("self",))  # one under way elsewhere: its own
            .filter(connection=connection, state__in=[Registration.State.ACTIVE, Registration.State.REMOVAL_FAILED])
            # One an automation turned on again meanwhile needs: it keeps the connection (accounts/connected.py).
            .filter(Q(automation__isnull=True) | Q(automation__enabled=False))
            .values_list("pk", flat=True)
        )
        Registration.objects.filter(pk__in=ids).update(
            state=Registration.State.REMOVING, next_try_at=timezone.now() + LEASE, updated_at=timezone.now()
        )
    return remove(ids) if ids else 0


def remove(ids: list[int]) -> int:
    """Remove from their apps the registrations of ids that are marked removing (claimed): outside any transaction.
    Returns how many the apps confirmed; each failure is kept as removal_failed, with its next try."""
    removed = 0
    for registration in Registration.objects.select_related("connection__app", "operation").filter(
        pk__in=ids, state=Registration.State.REMOVING
    ):
        try:
            removed += _remove(registration)
        except Exception:  # an after-commit removal must not fail whoever turned the automation off
            logger.exception("registration %s: the removal failed unexpectedly", registration.pk)
            _failed(registration, "the removal failed on our side; it will be tried again")
    return removed


def _remove(registration: Registration) -> int:
    from connections import keys
    from connectors import calls

    connection, operation = registration.connection, registration.operation
    if connection is None or operation is None:
        gone = "connection" if connection is None else "trigger"
        _failed(
            registration,
            f"its {gone} was deleted, so it cannot be removed from the app here: remove the webhook there by hand",
            again=False,
        )
        return 0
    credential = keys.unseal(connection.credential_sealed) if connection.credential_sealed else None
    unsubscribe = calls.Operation(
        app_name=connection.app.name,
        method="DELETE",
        endpoint=operation.endpoint.rstrip("/") + "/{{input.id}}",
        auth_type=connection.app.auth_type,
        auth_config=connection.app.auth_config or {},
    )
    try:
        calls.perform(unsubscribe, credential=credential, data={"id": registration.remote_id}, seconds=_seconds())
    except calls.CallFailed as failed:
        if not (failed.output and failed.output["status"] in (404, 410)):  # already gone is removed
            _failed(registration, str(failed))
            return 0
    Registration.objects.filter(pk=registration.pk).update(
        state=Registration.State.REMOVED,
        attempts=F("attempts") + 1,
        next_try_at=None,
        last_error="",
        updated_at=timezone.now(),
    )
    return 1


def _seconds() -> float:
    return float(settings.HTTP_STEP_TIMEOUT_SECONDS)


def _failed(registration: Registration, error: str, *, again: bool = True) -> None:
    attempts = registration.attempts + 1
    wait = min(timedelta(seconds=settings.REGISTRATION_RETRY_SECONDS) * 2 ** min(attempts - 1, 20), LAST_RETRY)
    Registration.objects.filter(pk=registration.pk).update(
        state=Registration.State.REMOVAL_FAILED,
        attempts=attempts,
        next_try_at=timezone.now() + wait if again else None,
        last_error=redact(error)[:500],  # an app may echo the URL it has: its key appears in no column
        updated_at=timezone.now(),
    )


def cleanup(*, now=None) -> dict:
    """The hourly task: registrations no automation needs are removed, and removals due are tried again.

    "No automation needs": its automation deleted, off (past GRACE), or
    changed since its turn-on checked the record (hold() marks it then) to
    a definition that needs another. Each record is claimed under
    FOR UPDATE SKIP LOCKED and marked removing with a LEASE before the
    call, so two workers never remove the same one and a lost one's claim
    runs out. Returns the counts: released, tried, removed.
    """
    now = now or timezone.now()
    released = _release_unneeded(now)
    due = Q(state=Registration.State.REMOVAL_FAILED) | Q(state=Registration.State.REMOVING)
    with transaction.atomic():
        ids = list(
            Registration.objects.select_for_update(skip_locked=True)
            .filter(due, next_try_at__lte=now)
            .order_by("next_try_at")
            .values_list("pk", flat=True)[:BATCH]
        )
        Registration.objects.filter(pk__in=ids).update(
            state=Registration.State.REMOVING, next_try_at=now + LEASE, updated_at=timezone.now()
        )
    removed = remove(ids) if ids else 0
    return {"released": released, "tried": len(ids), "removed": removed}


def _release_unneeded(now) -> int:
    automations = Registration._meta.get_field("automation").related_model.objects  # read, never locked here
    active = Registration.objects.filter(state=Registration.State.ACTIVE)
    candidates = active.filter(
        Q(automation__isnull=True)
        | Q(automation__enabled=False, created_at__lt=now - GRACE)
        | Q(automation__enabled=True, automation__updated_at__gt=F("updated_at"))
    ).values_list("pk", flat=True)[:BATCH]
    released = 0
    for pk in list(candidates):
        with transaction.atomic():
            registration = (
                Registration.objects.select_for_update(skip_locked=True)
                .filter(pk=pk, state=Registration.State.ACTIVE)
                .first()
            )
            if registration is None:
                continue
            automation = automations.filter(pk=registration.automation_id).first()
            if automation is not None and _needed(registration, automation, now):
                Registration.objects.filter(pk=pk).update(updated_at=timezone.now())  # checked: not a candidate again
                continue
            Registration.objects.filter(pk=pk).update(
                state=Registration.State.REMOVING, next_try_at=now, updated_at=timezone.now()
            )
            released += 1
    return released


def _needed(registration: Registration, automation, now) -> bool:
    if not automation.enabled:
        return registration.created_at >= now - GRACE
    need = need_of(automation)
    return (
        need is not None
        and need.url is not None
        and (registration.connection_id, registration.operation_id, registration.url_digest)
        == (need.connection.pk, need.operation.pk, digest(need.url))
    )
