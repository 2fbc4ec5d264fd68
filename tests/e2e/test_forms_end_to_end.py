"""Forms end to end: gunicorn, a Celery worker and beat on PostgreSQL and Redis, driven over HTTP as a browser would.

A hosted form's POST starts a run in the worker; its session page walks two
forms to the completion message; a one-time link is opened, submitted and
opened again.
"""

import re
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from automations import services as automation_services
from automations.models import Run
from publickeys import selectors as key_selectors
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END

FORM = {
    "type": "form",
    "title": "Order a shirt",
    "fields": [{"name": "email", "type": "email", "required": True}],
    "completion": {"message": "Your shirt is on its way."},
}
TWO_FORMS = [
    {
        "id": "size",
        "kind": "form",
        "title": "Your size",
        "fields": [{"name": "size", "type": "select", "options": ["S", "M", "L"], "required": True}],
    },
    {"id": "note", "kind": "form", "title": "Anything else?", "fields": [{"name": "note", "type": "text"}]},
]


@pytest.fixture
def stack(tmp_path):
    running = Stack(tmp_path, RUN_SWEEP_SECONDS="1", FORM_MIN_FILL_SECONDS="0")
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


def hidden(page: str, name: str) -> str:
    return re.search(rf'name="{name}" value="([^"]*)"', page).group(1)


def send(browser: httpx.Client, url: str, **data) -> httpx.Response:
    """Fill in the form at url as a person would: its hidden inputs (CSRF token, shown time, step) come along."""
    page = browser.get(url).text
    for name in ("csrfmiddlewaretoken", "fg-shown", "fg-step"):
        if f'name="{name}"' in page:
            data.setdefault(name, hidden(page, name))
    return browser.post(url, data=data)


def page_with(browser: httpx.Client, url: str, text: str, stack: Stack) -> str:
    def shown():
        page = browser.get(url).text
        return page if text in page else None

    return wait_until(shown, 60, 0.2, f"{text!r} at {url}: {stack.log('worker')[-2000:]}")


def test_a_form_post_starts_a_run_whose_session_page_walks_two_forms_to_the_completion(stack, owner):
    automation = automation_services.create_automation(
        owner=owner, name="Shirts", definition={"trigger": FORM, "steps": TWO_FORMS}, enabled=True
    )
    form_url = stack.base + urlsplit(key_selectors.url_of(purpose="form", target=automation)).path
    with httpx.Client(timeout=30) as browser:
        invalid = send(browser, form_url, email="not an address")
        assert invalid.status_code == 400 and "Enter a valid email address." in invalid.text
        accepted = send(browser, form_url, email="ada@example.com")
        assert accepted.status_code == 303
        session = urljoin(form_url, accepted.headers["Location"])
        assert urlsplit(session).path.startswith("/form/run/")
        page_with(browser, session, "Your size", stack)
        assert send(browser, session, size="M").status_code == 303
        page_with(browser, session, "Anything else?", stack)
        assert send(browser, session, note="Blue").status_code == 303
        page_with(browser, session, "Your shirt is on its way.", stack)
    run = Run.objects.get()
    assert run.status == "succeeded" and run.source == "form"
    assert [step["output"] for step in run.steps] == [{"size": "M"}, {"note": "Blue"}]


def test_a_one_time_link_works_once(stack, make_automation):
    ask = {**TWO_FORMS[0], "to": "link"}
    automation = make_automation([ask])
    hook = stack.hooks + urlsplit(automation_services.hook_url(automation)).path
    assert httpx.post(hook, json={}, timeout=30).status_code == 200
    run = wait_until(lambda: Run.objects.filter(status="waiting", waiting_for__step="size").first(), 60)
    link = stack.base + urlsplit(key_selectors.url_of(purpose="one_time_form", target=run)).path
    with httpx.Client(timeout=30) as browser:
        assert browser.get(link).status_code == 200 and browser.head(link).status_code == 200
        answered = send(browser, link, size="L")
        assert answered.status_code == 200 and "Thank you" in answered.text
        again = browser.get(link)
        assert again.status_code == 404 and "This form is not available" in again.text
    wait_until(lambda: Run.objects.filter(pk=run.pk, status="succeeded").exists(), 60, message="the run to go on")
    assert Run.objects.get(pk=run.pk).steps[0]["output"] == {"size": "L"}
