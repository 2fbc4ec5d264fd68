"""The Celery app; its settings are the CELERY_* names in config/settings.py."""

import os

from celery import Celery, signals
from celery.utils.log import get_multiprocessing_logger
from django.db import close_old_connections

from edge import logs

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("flowgate")
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
