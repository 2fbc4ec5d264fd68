"""The Celery app; its settings are the CELERY_* names in config/settings.py."""

import os

from celery import Celery, Task, signals
from celery.utils.log import get_multiprocessing_logger
from django.db import DatabaseError, close_old_connections

from edge import logs
from edge.outages import task_outage

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


class OutageAwareTask(Task):
    """A task that meets the database out of reach ends with one log line per outage in its process, not a
    traceback of its own: what it left undone (a delivery pending, a run leased) the sweeper queues again once
    the database answers, as docs/operations.md says. Called directly or run eagerly, inside its caller, it
    raises as any call does.
    """

    def __call__(self, *args, **kwargs):
        try:
            result = super().__call__(*args, **kwargs)
        except DatabaseError as error:
            if not task_outage.is_outage(error) or self.request.called_directly or self.request.is_eager:
                raise
            task_outage.refused_one(error)  # the connection is replaced after the task (_close_old_connections)
            return None
        task_outage.answered()
        return result


app = Celery("flowgate", task_cls=OutageAwareTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.task_prerun.connect
@signals.task_postrun.connect
def _close_old_connections(task=None, **kwargs) -> None:
    """Around each task, as Django does around each request: drop connections past DB_CONN_MAX_AGE or broken.

    Not for a task run eagerly: it runs inside its caller's transaction.
    """
    if task is None or not getattr(task.request, "is_eager", False):
        close_old_connections()


@signals.after_setup_logger.connect
@signals.after_setup_task_logger.connect
def _redact_keys(logger=None, **kwargs) -> None:
    """Celery replaces the root logger's handlers and gives tasks and pool processes their own: those redact too."""
    for each in (logger, get_multiprocessing_logger()):
        if each is not None:
            logs.redact_handlers(each)
