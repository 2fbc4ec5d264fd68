"""Deleting an automation while its webhooks arrive and its deliveries run: an order of locks that wins every race.

On PostgreSQL, Django's foreign keys are DEFERRABLE INITIALLY DEFERRED: a
transaction that inserts a run or a delivery asks for its automation's row
(FOR KEY SHARE) only when it commits, and a worker's transaction has by then
locked its delivery's row. A delete that locked the automation first and
then deleted the deliveries would wait for the worker while the worker waits
for it (a deadlock); a delete that collected the rows without any lock would
miss a run committed meanwhile, and fail on its foreign key at commit
(IntegrityError, the automation left in place). So, in two commits:

1. The automation is turned off (its trigger deactivated if it was on),
   under FOR UPDATE, which first waits for whoever holds its row FOR KEY
   SHARE. Committed, it stops new runs: workers turn into runs only
   deliveries of an automation that is on.
2. In one transaction: the automation's row is held FOR NO KEY UPDATE (no
   turn-on meanwhile, and foreign key checks still pass), the rows that
   nothing else points at (deliveries, lookup rows) are deleted, which waits
   for the workers under way to commit their runs, and only then is the
   automation locked FOR UPDATE, its trigger's delete called, and the row
   deleted with Django's collector, which reads what remains after the
   lock. A row committing after that lock waits for the delete, then fails
   its foreign key: the intake answers 404 (hooks.intake.AutomationGone)
   and a worker ends.

SQLite takes its one write lock at the start of each transaction, so there
the same steps simply run one after the other.
"""

from django.db import OperationalError, transaction
from django.db.models import CASCADE
from django.db.models.deletion import get_candidate_relations_to_delete

from automations import runs, triggers
from automations.models import Automation

ENDED_BY_DELETION = "the automation was deleted"
DEADLOCK = "40P01"  # PostgreSQL's SQLSTATE for a deadlock it broke by failing this transaction


def delete(*, automation_id: int) -> None:
    """Delete the automation and every row that points at it; returns once it is gone, whatever runs meanwhile.

    Outside a transaction it wins every race. Inside one (a test, a larger
    transaction), workers see "off" only once that one commits, and the lock
    of step 1 is held until then, so a worker turning a delivery into its run can deadlock with it.
    """
    again_after_deadlock = not transaction.get_connection().in_atomic_block
    # Ended first, in a statement of their own that takes no lock of the automation's: a person answering
    # meanwhile finds the run ended (the unavailable page), not a run about to go on then vanish.
    runs.end_waiting(automation_id=automation_id, reason=ENDED_BY_DELETION)
    while turned_off(automation_id):
        try:
            if _deleted_while_off(automation_id):
                return
        except OperationalError as error:
            # A transaction that locks a run before its delivery (a lost worker's run marked abandoned)
            # can close a cycle with step 2; PostgreSQL fails one of the two, and the delete starts again.
            if not again_after_deadlock or getattr(error.__cause__, "sqlstate", None) != DEADLOCK:
                raise


def turned_off(automation_id: int) -> bool:
    """Step 1 of delete(): off and committed, once no one holds the row FOR KEY SHARE; False if the automation is gone.

    An automation that was on has its trigger deactivated in this commit, as turning it off would.
    """
    with transaction.atomic():
        automation = Automation.objects.select_for_update().filter(pk=automation_id).first()
        if automation is None:
            return False
        if automation.enabled:
            Automation.objects.filter(pk=automation_id).update(enabled=False)
            automation.enabled = False
            triggers.of(automation).deactivate(automation)
    return True


@transaction.atomic
def _deleted_while_off(automation_id: int) -> bool:
    """Step 2; False, with nothing deleted, if the automation was turned on again since step 1."""
    held = Automation.objects.select_for_update(no_key=True).filter(pk=automation_id)
    enabled = held.values_list("enabled", flat=True).first()
    if enabled is None:
        return True
    if enabled:
        return False
    for relation in get_candidate_relations_to_delete(Automation._meta):
        if relation.on_delete is CASCADE and not any(get_candidate_relations_to_delete(relation.related_model._meta)):
            relation.related_model._base_manager.filter(**{relation.field.name: automation_id}).delete()
    automation = Automation.objects.select_for_update().get(pk=automation_id)
    triggers.of(automation).delete(automation)
    automation.delete()  # its keys with it (Automation.public_keys); "deleted" is sent once it commits (signals)
    return True
