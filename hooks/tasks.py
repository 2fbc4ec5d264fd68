"""Celery tasks of the hooks: thin wrappers, safe to receive twice."""

from celery import shared_task


@shared_task(name="hooks.process_delivery")
def process_delivery(delivery_id: int) -> None:
    from hooks import deliveries

    deliveries.process_delivery(delivery_id=delivery_id)


@shared_task(name="hooks.process_deliveries")
def process_deliveries(delivery_ids: list[int]) -> None:
    """Run deliveries committed together, in order; any left unrun (a worker killed) the sweeper requeues."""
    from hooks import deliveries

    deliveries.process_deliveries(delivery_ids=delivery_ids)


@shared_task(name="hooks.replay_kept")
def replay_kept(automation_id: int) -> None:
    from hooks import deliveries

    deliveries.replay_kept(automation_id=automation_id)
