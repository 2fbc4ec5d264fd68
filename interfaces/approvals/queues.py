"""Approval queues: placing an item for a run's approval step, reading a queue, and deciding an item once.

An item's state is read from its run, not kept beside it: it is pending
while undecided and its run still waits for it. A run that expired, was
reset (runs.end_waiting) or never settled into its wait (its worker lost)
leaves its item closed without anything here having to hear of it.
"""

import enum
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from automations import jsonsafe, runs
from automations.models import Run
from interfaces.models import ApprovalItem, ApprovalQueue
from publickeys import selectors as key_selectors
from publickeys import services as key_services
from publickeys.models import PublicKey

PURPOSE = PublicKey.Purpose.APPROVAL_QUEUE
COMMENT_LIMIT = 2000
SHOWN_CLOSED = 50  # decided and closed items listed below the pending ones, newest first
SHOWN_PENDING = 500


QUEUE_DELETED = "its approval queue was deleted"


def delete_queues(queues) -> int:
    """Delete approval queues (admin), their items and links, and end the runs waiting on those items.

    Left waiting, a run would wait for an item nobody can see any more, and
    its expiry would later take the expiry's path as if a person had let it
    lapse (or, with no expiry, it would wait for ever).
    """
    with transaction.atomic():
        items = list(ApprovalItem.objects.filter(queue__in=queues).values_list("pk", flat=True))
        runs.end_waiting(waiting_for__item_id__in=items, reason=QUEUE_DELETED)  # not a run gone on to wait elsewhere
        return queues.delete()[0]


class Outcome(enum.Enum):
    DECIDED = "decided"  # this decision was recorded and the run goes on with it
    ALREADY_DECIDED = "already decided"  # someone decided first: their decision stands
    CLOSED = "closed"  # expired, or its run ended: nobody can decide it any more
    NOT_FOUND = "not found"  # no such item in this queue


@dataclass(frozen=True)
class ItemView:
    """An item as the queue's page and its JSON show it."""

    id: int
    title: str
    text: str
    details: object
    created_at: datetime
    expires_at: datetime | None
    state: str  # pending, approved, rejected, expired or closed
    comment: str
    decided_at: datetime | None
    decided_from: str | None

    def as_json(self) -> dict:
        def when(value):
            return value.isoformat() if value else None

        return {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "details": self.details,
            "created_at": when(self.created_at),
            "expires_at": when(self.expires_at),
            "state": self.state,
            "comment": self.comment,
            "decided_at": when(self.decided_at),
            "decided_from": self.decided_from,
        }


def queue_of(automation) -> ApprovalQueue:
    """The automation's queue, made with its approval link the first time it is needed."""
    queue = ApprovalQueue.objects.filter(automation=automation).first()
    if queue is not None:
        return queue
    try:
        with transaction.atomic():
            queue = ApprovalQueue.objects.create(automation=automation)
            key_services.issue_key(purpose=PURPOSE, target=queue)
            return queue
    except IntegrityError:  # two first items at once: the other made it
        return ApprovalQueue.objects.get(automation=automation)


def approval_url(queue: ApprovalQueue) -> str | None:
    """The queue's link as its owner sees it (None when its key was sealed under another URL_KEY_SECRET)."""
    return key_selectors.url_of(purpose=PURPOSE, target=queue)


def place_item(*, run: Run, title: str, text: str, details, expires_at: datetime | None) -> dict:
    """Put an item in the queue of run's automation; returns what the run's waiting_for keeps (no key in clear)."""
    queue = queue_of(run.automation)
    item = ApprovalItem.objects.create(
        queue=queue, run=run, title=title, text=text, details=details, expires_at=expires_at
    )
    return {"item_id": item.pk, "public_key_id": key_selectors.live_key_id(purpose=PURPOSE, target=queue)}


def queue_for_key(key: str) -> ApprovalQueue | None:
    """The queue whose approval link ends in key; every miss costs what a hit costs (publickeys.selectors)."""
    queue_id = key_selectors.target_id_for_key(purpose=PURPOSE, key=key)
    if queue_id is None:
        return None
    return ApprovalQueue.objects.filter(pk=queue_id).first()


def items_of(queue: ApprovalQueue) -> tuple[list[ItemView], list[ItemView]]:
    """The queue's pending items, oldest first (the order they came in), and its latest closed ones, newest first."""
    now = timezone.now()
    # Bounded in SQL, whatever the queue's history: undecided items of waiting runs, not expired, are the pending
    # ones (each checked again below); of the other undecided ones (expired, their run ended) the latest few.
    waiting = (
        queue.items.filter(decision="", run__status=Run.Status.WAITING)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .order_by("created_at", "pk")
    )
    pending, closed = [], []
    for item in _with_run_state(waiting)[:SHOWN_PENDING]:
        view = _view(item, _undecided_state(item, now))
        (pending if view.state == "pending" else closed).append(view)
    ended = queue.items.filter(decision="").exclude(pk__in=[view.id for view in pending])
    for item in _with_run_state(ended).order_by("-created_at", "-pk")[:SHOWN_CLOSED]:
        closed.append(_view(item, _undecided_state(item, now)))
    decided = queue.items.exclude(decision="").order_by("-decided_at", "-pk")[:SHOWN_CLOSED]
    closed = sorted(
        [*closed, *(_view(item, item.decision) for item in decided)],
        key=lambda view: view.decided_at or view.expires_at or view.created_at,
        reverse=True,
    )[:SHOWN_CLOSED]
    return pending, closed


def item_view(queue: ApprovalQueue, item_id: int) -> ItemView | None:
    item = _with_run_state(queue.items.filter(pk=item_id)).first()
    if item is None:
        return None
    return _view(item, item.decision or _undecided_state(item, timezone.now()))


def _with_run_state(items):
    """Items with the two columns of their run that say whether it waits for them, not its large ones."""
    return items.select_related("run").defer("run__trigger", "run__definition", "run__steps", "run__answer")


def _undecided_state(item: ApprovalItem, now: datetime) -> str:
    if item.expires_at is not None and item.expires_at <= now:
        return "expired"
    run = item.run
    if run.status == Run.Status.WAITING and (run.waiting_for or {}).get("item_id") == item.pk:
        return "pending"
    return "closed"


def _view(item: ApprovalItem, state: str) -> ItemView:
    return ItemView(
        id=item.pk,
        title=item.title,
        text=item.text,
        details=item.details,
        created_at=item.created_at,
        expires_at=item.expires_at,
        state=state,
        comment=item.comment,
        decided_at=item.decided_at,
        decided_from=item.decided_from,
    )


@transaction.atomic
def decide(*, queue: ApprovalQueue, item_id: int, decision: str, comment: str, address: str | None) -> Outcome:
    """Record a person's decision on one item of this queue, once, and have its run go on with it.

    Two decisions racing on one item (two approvers, a double click) queue
    on the item's row: the first is recorded, the second finds it decided.
    The decision and the run's answer (automations.runs.answer) commit
    together: a run that stopped waiting meanwhile (expired, reset) refuses
    the answer and nothing is recorded.
    """
    item = ApprovalItem.objects.select_for_update().filter(queue=queue, pk=item_id).first()
    if item is None:
        return Outcome.NOT_FOUND
    if item.decision:
        return Outcome.ALREADY_DECIDED
    now = timezone.now()
    if item.expires_at is not None and item.expires_at <= now:
        return Outcome.CLOSED
    waiting_for = (
        Run.objects.filter(pk=item.run_id, status=Run.Status.WAITING, waiting_for__item_id=item.pk)
        .values_list("waiting_for", flat=True)
        .first()
    )
    if waiting_for is None:
        return Outcome.CLOSED
    item.decision = ApprovalItem.Decision(decision)
    item.comment = jsonsafe.clean_text(comment or "")[:COMMENT_LIMIT]
    item.decided_at = now
    item.decided_from = address or None
    item.save(update_fields=["decision", "comment", "decided_at", "decided_from"])
    answer = {"decision": item.decision.value, "comment": item.comment, "decided_at": now.isoformat()}
    if not runs.answer(item.run_id, step=waiting_for["step"], answer=answer):
        transaction.set_rollback(True)
        return Outcome.CLOSED
    return Outcome.DECIDED
