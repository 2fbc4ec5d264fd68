"""Celery tasks of the hooks: thin wrappers, safe to receive twice."""

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(name="hooks.process_delivery")
def process_delivery(delivery_id: int) -> None:
    from hooks import deliveries

    deliveries.process_delivery(delivery_id=delivery_id)


# The intake sends up to 200 ids a message (hooks.intake.DISPATCH_CHUNK: a message costs the hooks process more
# than ten deliveries). A worker runs this many of them and first queues the rest in messages of this size, so that
# no one task holds 200 runs in a row while other workers wait, and a slow automation's burst is shared out.
TAKEN = 50


@shared_task(name="hooks.process_deliveries")
def process_deliveries(delivery_ids: list[int]) -> None:
    """Run deliveries committed together, in order; any left unrun (a worker killed) the sweeper requeues."""
    from hooks import deliveries

    for start in range(TAKEN, len(delivery_ids), TAKEN):
        share = delivery_ids[start : start + TAKEN]
        try:
            process_deliveries.delay(share)
        except Exception:  # the broker went meanwhile: they stay pending, and the sweeper queues them
            logger.warning("could not share out %d deliveries; the sweeper will queue them", len(share), exc_info=True)
    deliveries.process_deliveries(delivery_ids=delivery_ids[:TAKEN])


@shared_task(name="hooks.replay_kept")
def replay_kept(automation_id: int) -> None:
    from hooks import deliveries

    deliveries.replay_kept(automation_id=automation_id)
