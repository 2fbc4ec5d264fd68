"""An oauth_v2 app connected in Chromium, from the feed's connect_url to a working app action: gunicorn, a real
Celery worker, PostgreSQL and Redis, and the other app on loopback (tests/local_oauth.py) with its own sign-in page.

A visitor signs up from /signup?app=acorn-crm, confirms from the mail, signs in, is offered Acorn CRM, names the
connection, allows access on Acorn's page, comes back connected; an automation with an app_action step on that
connection then runs in the worker, and its run page shows Acorn's answer.
"""

import json
import urllib.request
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model

from automations import services as automation_services
from automations.models import Run
from catalog.models import App
from conftest import app_doc
from connections.models import Connection
from tests import local_oauth
from tests.e2e.stack import END_TO_END, Stack, wait_until
from tests.e2e.test_accounts_in_browser import PASSWORD, links_mailed

pytestmark = END_TO_END


@pytest.fixture
def acorn():
    with local_oauth.running() as app:
        app.mode = "page"  # the owner clicks Allow on Acorn's own page
        yield app


@pytest.fixture
def stack(tmp_path, browser, make_catalog, acorn):
    make_catalog(app_doc("acorn-crm", **local_oauth.catalog_entry(acorn.base)))
    running = Stack(
        tmp_path,
        SIGNUP_OPEN="1",
        EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend",
        EMAIL_FILE_PATH=str(tmp_path / "mail"),
        HTTP_STEP_ALLOW_PRIVATE="1",  # Acorn listens on 127.0.0.1
    )
    running.mail = tmp_path / "mail"
    running.start_web()
    running.start_worker()
    yield running
    running.stop()


def test_an_oauth_app_is_connected_from_the_sign_up_link_and_its_action_runs(stack, page, acorn):
    raw, email = page.raw, "grace@example.com"
    page.open(f"{stack.base}/signup?app=acorn-crm", "sign-up")
    raw.get_by_label("Email").fill(email)
    raw.get_by_label("Password").fill(PASSWORD)
    raw.get_by_role("button", name="Create account").click()
    page.check("check-your-inbox")
    (link,) = wait_until(lambda: links_mailed(stack, email, "/signup/confirm/"), 10, message="the confirmation mail")
    page.open(link, "confirm")
    raw.get_by_role("button", name="Confirm").click()
    page.check("confirmed")
    raw.get_by_label("Email").fill(email)
    raw.get_by_label("Password").fill(PASSWORD)
    raw.get_by_role("button", name="Sign in").click()
    page.check("offered")

    raw.get_by_role("link", name="Connect Acorn CRM").click()
    page.check("connect-form")
    assert "sign in on Acorn CRM's own page" in raw.locator("main").inner_text()
    raw.get_by_label("Name").fill("Sales team")
    raw.get_by_role("button", name="Connect").click()
    raw.wait_for_load_state("load")
    assert urlsplit(raw.url).netloc == urlsplit(acorn.base).netloc  # on Acorn's own sign-in page
    page.check("acorns-page")
    raw.get_by_role("button", name="Allow").click()
    page.check("connected")
    assert "Acorn CRM is connected as “Sales team”." in raw.get_by_role("status").inner_text()
    connection = Connection.objects.get()
    assert connection.state == "connected" and connection.owner.email == email
    assert [request["grant_type"] for request in acorn.token_requests] == ["authorization_code"]
    assert acorn.token_requests[0]["form"]["code_verifier"]  # PKCE
    assert not any(token in raw.content() for token in [*acorn.access_tokens, *acorn.refresh_tokens])

    step = local_oauth.create_lead_step(connection.pk)
    automation = automation_services.create_automation(
        owner=get_user_model().objects.get(email=email),
        name="New leads to Acorn",
        definition={"trigger": {"type": "webhook"}, "steps": [step]},
        enabled=True,
    )
    assert App.objects.get(slug="acorn-crm").connections.count() == 1
    hook = stack.hooks + urlsplit(automation_services.hook_url(automation)).path
    request = urllib.request.Request(
        hook, json.dumps({"email": "lead@example.com"}).encode(), {"Content-Type": "application/json"}
    )
    assert urllib.request.urlopen(request, timeout=10).status == 200
    run = wait_until(
        lambda: Run.objects.filter(automation=automation, status__in=["succeeded", "failed"]).first(),
        60,
        message="the run to end in the worker",
    )
    assert run.status == "succeeded", run.error
    assert acorn.calls and acorn.calls[-1]["body"] == {"email": "lead@example.com"}

    page.open(f"{stack.base}/account/runs/{run.pk}", "the-run")
    raw.get_by_text("Output").first.click()
    shown = raw.locator("main").inner_text()
    assert '"got"' in shown and "lead@example.com" in shown
    assert not any(token in raw.content() for token in [*acorn.access_tokens, *acorn.refresh_tokens])
