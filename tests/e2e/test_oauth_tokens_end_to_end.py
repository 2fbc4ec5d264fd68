"""An oauth_v2 connection's tokens as a real Celery worker uses them: refreshed before they expire, refreshed once
after the app refuses one, and a refused refresh marking the connection for its owner. gunicorn, a worker,
PostgreSQL and Redis, and the other app on loopback (tests/local_oauth.py); the connection made through the pages
in this process, as accounts/tests/test_oauth_connections.py makes it."""

import json
import urllib.request
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.utils import timezone

from accounts.tests import test_oauth_connections as through_the_pages
from accounts.tests.test_oauth_connections import PAGE, connect, text
from automations import services as automation_services
from automations.models import Run
from conftest import app_doc
from connections.models import Connection
from tests import local_oauth
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END
acorn = through_the_pages.acorn  # the app on loopback, as those tests run it


@pytest.fixture
def stack(tmp_path, make_catalog, acorn):
    make_catalog(app_doc("acorn-crm", **local_oauth.catalog_entry(acorn.base)))
    running = Stack(tmp_path, HTTP_STEP_ALLOW_PRIVATE="1")
    running.start_web()
    running.start_worker()
    yield running
    running.stop()


def leads_to_acorn(owner, connection):
    step = local_oauth.create_lead_step(connection.pk)
    definition = {"trigger": {"type": "webhook"}, "steps": [step], "settings": {"retries": {"max_attempts": 1}}}
    return automation_services.create_automation(owner=owner, name="Leads", definition=definition, enabled=True)


def sent(stack, automation, email: str) -> Run:
    """POST a webhook with this email; its run once the worker has ended it."""
    hook = stack.hooks + urlsplit(automation_services.hook_url(automation)).path
    request = urllib.request.Request(hook, json.dumps({"email": email}).encode(), {"Content-Type": "application/json"})
    assert urllib.request.urlopen(request, timeout=10).status == 200
    return wait_until(
        lambda: Run.objects.filter(
            automation=automation, trigger__body__email=email, status__in=["succeeded", "failed"]
        ).first(),
        60,
        message=f"the run of {email} to end in the worker",
    )


def test_a_worker_refreshes_before_expiry_and_after_a_refusal_and_a_refused_refresh_marks_the_connection(
    stack, acorn, owner, client
):
    client.force_login(owner)
    connection = connect(client)
    automation = leads_to_acorn(owner, connection)

    Connection.objects.filter(pk=connection.pk).update(token_expires_at=timezone.now() + timedelta(seconds=30))
    run = sent(stack, automation, "soon@example.com")  # within the refresh margin: refreshed before the call
    assert run.status == "succeeded", run.error
    assert [request["grant_type"] for request in acorn.token_requests] == ["authorization_code", "refresh_token"]
    assert [call["live"] for call in acorn.calls] == [True]

    acorn.expire_access_tokens()  # the app ended the token early: our expiry still says it is good
    run = sent(stack, automation, "refused@example.com")
    assert run.status == "succeeded", run.error
    assert [call["live"] for call in acorn.calls] == [True, False, True]  # refused, refreshed once, called again
    assert [request["grant_type"] for request in acorn.token_requests][2:] == ["refresh_token"]

    acorn.expire_access_tokens()
    acorn.revoke_refresh_tokens()
    run = sent(stack, automation, "revoked@example.com")
    assert run.status == "failed"
    assert "Acorn CRM refused to give access (400). It said: Refresh token revoked." in run.error
    connection.refresh_from_db()
    assert connection.state == "needs_reconnection"
    listed = text(client.get(PAGE))
    assert "needs reconnection" in listed and "Refresh token revoked." in listed
