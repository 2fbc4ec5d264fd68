"""Accepting webhook deliveries (DESIGN.md contract 1); what becomes of them is hooks/deliveries.py."""

import hashlib

from automations import jsonsafe
from hooks import intake
from hooks.incoming import Incoming
from publickeys.redaction import redact


def accept_delivery(*, automation_id: int, incoming: Incoming) -> intake.Accepted:
    """Store the delivery and queue its run; returns once the row is committed (hooks/intake.py).

    The run is queued whether the automation is on or off: off, the task
    leaves the delivery kept for replay. Raises intake.AutomationGone when
    the automation was deleted a moment ago.
    """
    accepted = new_delivery(automation_id=automation_id, incoming=incoming)
    intake.store(accepted)
    return accepted


def new_delivery(
    *,
    incoming: Incoming,
    automation_id: int | None = None,
    connection_id: int | None = None,
    app_id: int | None = None,
    account: str = "",
) -> intake.Accepted:
    """The delivery a request makes, not yet stored: intake.store or intake.writer.store stores it.

    Of an automation (its webhook URL), or of a connection or an app (their URLs: a worker fans it out).
    """
    return intake.Accepted(
        automation_id=automation_id,
        connection_id=connection_id,
        app_id=app_id,
        account=account,
        method=incoming.method,
        path=redact(incoming.path)[:2048],  # a key is a password: never stored in clear beside its digest
        # Text columns refuse NUL on PostgreSQL: one such row would fail the whole batch's INSERT.
        query_string=jsonsafe.clean_text(incoming.query_string),
        content_type=jsonsafe.clean_text(incoming.content_type[:255]),
        body=incoming.body,
        body_digest=hashlib.sha256(incoming.body).hexdigest(),
    )
