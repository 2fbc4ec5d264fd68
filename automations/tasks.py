"""Celery tasks of automations: thin wrappers, safe to receive twice."""

from celery import shared_task


@shared_task(name="automations.resume_run")
def resume_run(run_id: int) -> None:
    from automations import runs

    runs.resume(run_id)


@shared_task(name="automations.sweep_runs")
def sweep_runs() -> None:
    from automations import runs

    runs.sweep()
