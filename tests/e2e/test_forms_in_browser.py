"""Forms in Chromium against gunicorn, a Celery worker and beat: the hosted form with a validation error then sent,
the session page walking two forms to the completion, a conditional field, a one-time link used once, a phone."""

import pytest

from automations import services as automation_services
from automations.models import Run
from publickeys import selectors as key_selectors
from tests.e2e.browser import assert_fits_the_screen
from tests.e2e.stack import END_TO_END, Stack, wait_until

pytestmark = END_TO_END

FORM = {
    "type": "form",
    "title": "Order a shirt",
    "description": "We ship within a week.",
    "fields": [
        {"name": "email", "type": "email", "label": "Email", "required": True},
        {"name": "gift", "type": "checkbox", "label": "It is a gift"},
        {
            "name": "to",
            "type": "text",
            "label": "Gift for",
            "required": True,
            "visible_if": {"field": "gift", "equals": True},
        },
        {"name": "ref", "type": "hidden"},
    ],
    "completion": {"message": "Your shirt is on its way."},
}
TWO_FORMS = [
    {
        "id": "size",
        "kind": "form",
        "title": "Your size",
        "fields": [{"name": "size", "type": "select", "label": "Size", "options": ["S", "M", "L"], "required": True}],
    },
    {"id": "note", "kind": "form", "title": "Anything else?", "fields": [{"name": "note", "type": "long_text"}]},
]


@pytest.fixture
def stack(tmp_path, browser):
    running = Stack(tmp_path, RUN_SWEEP_SECONDS="1", FORM_MIN_FILL_SECONDS="0")
    running.start_web()
    running.start_worker()
    running.start_beat()
    yield running
    running.stop()


def on(stack, url: str) -> str:
    from urllib.parse import urlsplit

    return stack.base + urlsplit(url).path


def wait_for_heading(page, name: str):
    """The session page refreshes itself while the run is busy: wait for it to show the heading."""
    try:
        wait_until(lambda: page.raw.get_by_role("heading", name=name).count() > 0, 60, 0.2, f"heading {name!r}")
    except AssertionError:
        runs = list(Run.objects.values_list("status", "waiting_for", "error"))
        raise AssertionError(
            f"no heading {name!r} at {page.raw.url}: {page.raw.content()[:3000]} runs: {runs}"
        ) from None


def test_a_hosted_form_with_an_error_then_sent_and_its_session_page_through_two_forms(stack, page, owner):
    automation = automation_services.create_automation(
        owner=owner, name="Shirts", definition={"trigger": FORM, "steps": TWO_FORMS}, enabled=True
    )
    page.open(on(stack, automation_services.form_url(automation)) + "?ref=newsletter", "hosted-form")
    assert not page.raw.get_by_label("Gift for").is_visible()
    page.raw.get_by_label("It is a gift").check()  # the script shows the field its condition names
    assert page.raw.get_by_label("Gift for").is_visible()
    page.raw.get_by_label("Email").fill("not an address")
    page.raw.get_by_role("button", name="Send").click()
    page.check("validation-errors")
    assert page.raw.get_by_text("Enter a valid email address.").is_visible()
    assert page.raw.get_by_text("This field is required.").is_visible()  # Gift for, shown since gift is ticked
    assert page.raw.get_by_label("It is a gift").is_checked()  # every value kept
    page.raw.get_by_label("Email").fill("ada@")  # still wrong: its error stays
    assert page.raw.get_by_text("Enter a valid email address.").is_visible()
    page.raw.get_by_label("Email").fill("ada@example.com")  # fixed: its error goes, the other one stays
    assert page.raw.get_by_text("Enter a valid email address.").count() == 0
    assert page.raw.get_by_label("Email").get_attribute("aria-invalid") is None
    assert page.raw.get_by_text("This field is required.").is_visible()
    assert page.raw.get_by_text("Please correct the answers marked below.").is_visible()
    page.raw.get_by_label("Gift for").fill("Grace")
    assert page.raw.get_by_text("This field is required.").count() == 0
    assert not page.raw.get_by_text("Please correct the answers marked below.").is_visible()
    page.check("validation-errors-fixed")
    page.raw.get_by_role("button", name="Send").click()
    wait_for_heading(page, "Your size")
    assert "/form/run/" in page.raw.url
    page.check("session-first-form")
    page.raw.get_by_label("Size").select_option("M")
    page.raw.get_by_role("button", name="Send").click()
    wait_for_heading(page, "Anything else?")
    page.check("session-second-form")
    page.raw.get_by_label("Note").fill("Blue, please")
    page.raw.get_by_role("button", name="Send").click()
    wait_for_heading(page, "Thank you")
    page.check("session-completion")
    assert page.raw.get_by_text("Your shirt is on its way.").is_visible()
    page.raw.reload()
    assert page.raw.get_by_text("Your shirt is on its way.").is_visible()
    run = Run.objects.get()
    assert run.trigger["body"] == {"email": "ada@example.com", "gift": True, "to": "Grace", "ref": "newsletter"}
    assert [step["output"] for step in run.steps] == [{"size": "M"}, {"note": "Blue, please"}]


def test_a_one_time_link_opened_submitted_and_opened_again(stack, page, make_automation):
    automation = make_automation([{**TWO_FORMS[0], "to": "link"}])
    run = Run.objects.create(
        automation=automation,
        definition=automation.definition,
        source="webhook",
        status="waiting",
        waiting_for={"kind": "start", "step": ""},
    )
    from automations import runs

    assert runs.resume(run.pk, early=True)  # this process is the worker that reaches the wait
    run.refresh_from_db()
    link = on(stack, key_selectors.url_of(purpose="one_time_form", target=run))
    page.open(link, "one-time-form")
    page.raw.get_by_label("Size").select_option("L")
    page.raw.get_by_role("button", name="Send").click()
    page.check("one-time-sent")
    assert page.raw.get_by_role("heading", name="Thank you").is_visible()
    response = page.open(link, "one-time-again")
    assert response.status == 404 and page.raw.get_by_role("heading", name="This form is not available").is_visible()
    wait_until(lambda: Run.objects.filter(pk=run.pk, status="succeeded").exists(), 60, message="the run to go on")


def test_a_hosted_form_fits_a_phone_and_speaks_german(stack, phone_page, owner):
    automation = automation_services.create_automation(
        owner=owner, name="Shirts", definition={"trigger": FORM, "steps": []}, enabled=True
    )
    phone_page.raw.context.set_extra_http_headers({"Accept-Language": "de-DE,de;q=0.9"})
    phone_page.open(on(stack, automation_services.form_url(automation)), "hosted-form-phone-german")
    assert_fits_the_screen(phone_page)
    assert phone_page.raw.get_by_role("button", name="Senden").is_visible()


def test_a_page_sent_again_while_its_first_post_is_being_started_says_it_is_still_sending(tmp_path, page, owner):
    from interfaces.forms import spam, submissions

    stack = Stack(tmp_path, FORM_MIN_FILL_SECONDS="0")
    stack.start_web()
    try:
        automation = automation_services.create_automation(
            owner=owner, name="Shirts", definition={"trigger": FORM, "steps": []}, enabled=True
        )
        page.open(on(stack, automation_services.form_url(automation)), "hosted-form")
        shown = page.raw.locator(f'input[name="{spam.SHOWN}"]').input_value()
        assert submissions.claim(shown)  # the first POST of this page, still being started (or died meanwhile)
        page.raw.get_by_label("Email").fill("ada@example.com")
        page.raw.get_by_role("button", name="Send").click()
        page.check("still-sending")
        assert page.raw.get_by_role("heading", name="Still sending").is_visible()
        assert not Run.objects.exists()
    finally:
        stack.stop()


def test_a_conditional_required_field_is_marked_required_and_blocks_sending_only_while_shown(stack, page, owner):
    automation = automation_services.create_automation(
        owner=owner, name="Shirts", definition={"trigger": FORM, "steps": []}, enabled=True
    )
    page.open(on(stack, automation_services.form_url(automation)), "hosted-form")
    gift_for = page.raw.get_by_label("Gift for")
    assert gift_for.evaluate("input => input.closest('.field').classList.contains('field--required')")  # its " *"
    page.raw.get_by_label("It is a gift").check()
    assert gift_for.evaluate("input => input.required")
    page.raw.get_by_label("Email").fill("not an address")
    page.raw.get_by_role("button", name="Send").click()  # the browser stops it: Gift for is required and empty
    assert gift_for.evaluate("input => !input.validity.valid") and not Run.objects.exists()
    gift_for.fill("Grace")
    page.raw.get_by_role("button", name="Send").click()
    page.check("validation-errors")  # the server's answer: the address; Gift for shown again, required
    page.raw.get_by_label("Gift for").fill("")
    page.raw.get_by_label("It is a gift").uncheck()  # hidden now: its emptied answer must not stop the form
    assert not page.raw.get_by_label("Gift for").evaluate("input => input.required")
    page.raw.get_by_label("Email").fill("ada@example.com")
    page.raw.get_by_role("button", name="Send").click()
    wait_until(lambda: "/form/run/" in page.raw.url, 60, 0.2, "the session page after sending")
    assert Run.objects.get().trigger["body"] == {"email": "ada@example.com", "gift": False, "ref": ""}


def test_the_page_shows_a_conditional_field_exactly_when_the_server_keeps_it(stack, page, owner):
    from django.http import QueryDict

    from interfaces.forms.fields import visible_fields

    fields = [
        {"name": "code", "type": "text", "label": "Code"},
        {"name": "x", "type": "text", "label": "X", "visible_if": {"field": "code", "equals": "ABC"}},
        {"name": "age", "type": "number", "label": "Age"},
        {"name": "y", "type": "text", "label": "Y", "visible_if": {"field": "age", "equals": 18}},
        {"name": "size", "type": "text", "label": "Size"},
        {"name": "z", "type": "text", "label": "Z", "visible_if": {"field": "size", "equals": 18.0}},
    ]
    definition = {"trigger": {**FORM, "fields": fields}, "steps": []}
    automation = automation_services.create_automation(owner=owner, name="Agree", definition=definition, enabled=True)
    page.open(on(stack, automation_services.form_url(automation)), "hosted-form")
    for code, age, size in (("abc", "18.0", "18"), ("ABC", "17", "18.0"), ("ABC", "18", "x"), ("", "", "")):
        page.raw.get_by_label("Code").fill(code)
        page.raw.get_by_label("Age").fill(age)
        page.raw.get_by_label("Size").fill(size)
        hidden = "input => input.closest('[data-visible-if]').hidden"
        shown = {name for name in "xyz" if not page.raw.locator(f'input[name="{name}"]').evaluate(hidden)}
        server = visible_fields(fields, QueryDict(f"code={code}&age={age}&size={size}")) & set("xyz")
        assert shown == server, (code, age, size)


def test_a_one_field_form_sent_300_ms_after_it_loads_gets_its_run(tmp_path, page, owner):
    """As a browser's autofill sends it: the minimum fill time (2 s here, its default) never refuses a person."""
    stack = Stack(tmp_path, FORM_MIN_FILL_SECONDS="2")
    stack.start_web()
    try:
        trigger = {
            "type": "form",
            "title": "Newsletter",
            "fields": [{"name": "email", "type": "email", "label": "Email"}],
        }
        automation = automation_services.create_automation(
            owner=owner, name="Newsletter", definition={"trigger": trigger, "steps": []}, enabled=True
        )
        page.open(on(stack, automation_services.form_url(automation)), "one-field-form")
        page.raw.get_by_label("Email").fill("ada@example.com")
        page.raw.wait_for_timeout(300)
        page.raw.get_by_role("button", name="Send").click()
        page.check("sent")  # the session page, busy: no worker runs here
        assert "/form/run/" in page.raw.url
        assert Run.objects.filter(automation=automation).count() == 1
    finally:
        stack.stop()
