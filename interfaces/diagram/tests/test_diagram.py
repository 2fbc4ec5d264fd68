"""The automation diagram: its owner sees the trigger and every step, readably, with the latest run's states."""

import re
import uuid

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from automations.models import Automation, Run
from interfaces.diagram import drawing

pytestmark = pytest.mark.django_db

STEPS = [
    {"id": "who", "kind": "set_values", "values": {"email": "{{trigger.body.email}}"}},
    {
        "id": "only_paid",
        "kind": "condition",
        "all": [{"left": "{{trigger.body.status}}", "op": "equals", "right": "paid"}],
    },
    {
        "id": "crm",
        "kind": "http_request",
        "method": "POST",
        "url": "https://crm.example/api/contacts",
        "headers": {"Authorization": "Bearer sk-live-123456"},
        "json": {"email": "{{steps.who.email}}", "api_key": "abc-secret-999"},
    },
    {"id": "pause", "kind": "delay", "seconds": 5400},
    {
        "id": "remember",
        "kind": "lookup_rows",
        "table": "customers",
        "action": "upsert",
        "scope": "account",
        "match": {"email": "{{steps.who.email}}"},
        "values": {"seen": True},
    },
    {"id": "answer", "kind": "respond", "status": 201, "body": {"ok": True}},
]


def _without_csrf(body: bytes) -> bytes:
    return re.sub(rb'name="csrfmiddlewaretoken" value="[^"]+"', b"", body)


def url(automation) -> str:
    return f"/automation?uuid={automation.uuid}"


def test_signed_out_visitors_go_to_sign_in_and_come_back(client, make_automation):
    automation = make_automation(STEPS)
    response = client.get(url(automation))
    assert response.status_code == 302
    assert response["Location"] == f"/login?next=/automation%3Fuuid%3D{automation.uuid}"


def test_another_account_gets_404_as_for_an_unknown_uuid(client, make_automation, another_account):
    automation = make_automation(STEPS)
    client.force_login(another_account)
    theirs = client.get(url(automation))
    unknown = client.get(f"/automation?uuid={uuid.uuid4()}")
    assert theirs.status_code == unknown.status_code == 404
    assert _without_csrf(theirs.content) == _without_csrf(unknown.content)
    assert automation.name.encode() not in theirs.content


def test_staff_who_do_not_own_it_get_404_and_are_told_whose_it_is_and_where_they_see_it(staff_client, make_automation):
    automation = make_automation(STEPS, name="Paid signups")
    response = staff_client.get(url(automation))
    assert response.status_code == 404
    page = response.content.decode()
    assert "belongs to owner" in page and f"/admin/automations/automation/{automation.pk}/change/" in page
    assert "flow__node" not in page  # the diagram stays its owner's page


def test_an_account_that_is_not_staff_is_told_nothing_of_whose_it_is(client, make_automation, another_account):
    client.force_login(another_account)
    page = client.get(url(make_automation(STEPS))).content.decode()
    assert "Another account" not in page and "/admin/" not in page


def test_long_settings_are_cut_after_a_whole_line_never_inside_a_number():
    value = drawing._value({"numbers": list(range(100_000, 100_400))})
    assert value.endswith("\n…") and len(value) <= drawing.MAX_VALUE_CHARS + 2
    shown = [line.strip().rstrip(",") for line in value.splitlines()[2:-1]]
    assert all(len(number) == 6 for number in shown if number.isdigit()), shown[-3:]


@pytest.mark.parametrize("shape", ["upper", "braces", "urn", "hex", "missing", "empty", "junk", "nul"])
def test_lookalike_and_malformed_uuids_get_404(client, owner, make_automation, shape):
    automation = make_automation(STEPS)
    value = str(automation.uuid)
    variants = {
        "upper": value.upper(),
        "braces": "{" + value + "}",
        "urn": "urn:uuid:" + value,
        "hex": automation.uuid.hex,
        "missing": None,
        "empty": "",
        "junk": "' OR 1=1 --",
        "nul": value + "\x00",
    }
    client.force_login(owner)
    variant = variants[shape]
    response = client.get("/automation", {} if variant is None else {"uuid": variant})
    assert response.status_code == 404


def test_the_owner_sees_the_trigger_and_every_step_in_words(client, owner, make_automation):
    automation = make_automation(STEPS, name="Record signups")
    client.force_login(owner)
    response = client.get(url(automation))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<h1>Record signups</h1>" in html
    assert "A request to its webhook URL" in html
    for step in STEPS:
        assert f'<h3 class="flow__title" dir="auto">{step["id"]}</h3>' in html
    assert "{{trigger.body.status}} equals paid" in html
    assert "POST https://crm.example/api/contacts" in html
    assert "Waits 1 h 30 min" in html
    assert "Upsert rows of the account’s table “customers”" in html
    assert "Answers the web service caller with status 201" in html
    assert "No run yet" in html
    assert "<script" not in html


def test_secrets_in_settings_are_masked(client, owner, make_automation):
    client.force_login(owner)
    html = client.get(url(make_automation(STEPS))).content.decode()
    assert "sk-live-123456" not in html and "abc-secret-999" not in html
    assert "Authorization" in html and drawing.MASK in html


def test_a_urls_password_and_secret_query_values_and_credentials_are_masked():
    node = drawing.step_node(
        {
            "id": "call",
            "kind": "http_request",
            "method": "POST",
            "url": "https://user:hunter2@api.example.com/v1?api_key=SECRETQUERY&q=shown&sig=abc#top",
        }
    )
    masked = f"https://user:{drawing.MASK}@api.example.com/v1?api_key={drawing.MASK}&q=shown&sig={drawing.MASK}#top"
    assert node.summary == "POST " + masked
    at_sign = drawing.step_node({"id": "c", "kind": "http_request", "url": "https://user:p@ss@host.example/a@b"})
    assert at_sign.summary == f"GET https://user:{drawing.MASK}@host.example/a@b"  # the password held an @
    values = {"auth": "x", "Credentials": "y", "author": "z"}
    values = drawing.step_node({"id": "v", "kind": "set_values", "values": values})
    assert dict(values.settings) == {"auth": drawing.MASK, "Credentials": drawing.MASK, "author": "z"}


def test_the_latest_runs_state_shows_on_each_step_and_what_a_waiting_step_waits_for(client, owner, make_automation):
    automation = make_automation(STEPS)
    Run.objects.create(
        automation=automation, source="webhook", status="failed", steps=[{"id": "who", "status": "failed"}]
    )
    until = timezone.now().isoformat()
    Run.objects.create(
        automation=automation,
        source="webhook",
        status="waiting",
        definition=automation.definition,
        steps=[
            {"id": "who", "kind": "set_values", "status": "succeeded", "output": {}},
            {"id": "only_paid", "kind": "condition", "status": "succeeded", "output": {"passed": True}},
            {"id": "crm", "kind": "http_request", "status": "succeeded", "output": {}},
            {
                "id": "pause",
                "kind": "delay",
                "status": "waiting",
                "waiting_for": {"kind": "delay", "step": "pause", "until": until, "url": "https://x/form/s/KEY"},
            },
        ],
    )
    client.force_login(owner)
    html = client.get(url(automation)).content.decode()
    states = re.findall(
        r'<h3 class="flow__title" dir="auto">(\w+)</h3>\s*</div>\s*<span class="state state--([\w-]+)">', html
    )
    assert states == [
        ("who", "succeeded"),
        ("only_paid", "succeeded"),
        ("crm", "succeeded"),
        ("pause", "waiting"),
        ("remember", "not-reached"),
        ("answer", "not-reached"),
    ]
    assert "The latest run waits here for:" in html and until in html
    assert "form/s/KEY" not in html  # a person's link is theirs, not shown here


def test_a_failed_step_shows_its_error(client, owner, make_automation):
    automation = make_automation(STEPS)
    Run.objects.create(
        automation=automation,
        source="webhook",
        status="failed",
        error="step crm: status 500",
        steps=[
            {"id": "who", "status": "succeeded"},
            {"id": "only_paid", "status": "succeeded"},
            {"id": "crm", "status": "failed", "error": "the server answered 500"},
        ],
    )
    client.force_login(owner)
    html = client.get(url(automation)).content.decode()
    assert "the server answered 500" in html
    assert 'class="state state--failed"' in html


def test_kinds_unknown_today_are_shown_generically():
    node = drawing.step_node(
        {"id": "ask", "kind": "approval", "queue": "refunds", "expires": {"after_hours": 24}, "secret_token": "x"}
    )
    assert node.title == "ask" and node.kind == "approval"
    assert ("queue", "refunds") in node.settings
    assert ("secret_token", drawing.MASK) in node.settings
    assert dict(node.settings)["expires"].replace("\n", "").replace(" ", "") == '{"after_hours":24}'
    assert node.waits == "Waits for a person"
    future = drawing.step_node({"id": "x", "kind": "teleport", "where": "mars"})
    assert future.settings == [("where", "mars")] and future.waits == ""


def test_a_long_value_is_cut():
    node = drawing.step_node({"id": "x", "kind": "set_values", "values": {"text": "a" * 5000}})
    assert len(dict(node.settings)["text"]) == drawing.MAX_VALUE_CHARS + 1


def test_each_automation_gets_its_own_uuid(make_automation):
    first, second = make_automation(STEPS), make_automation(STEPS)
    assert first.uuid != second.uuid
    assert Automation.objects.filter(uuid=first.uuid).count() == 1


def test_admin_links_to_the_diagram(staff_client, make_automation):
    automation = make_automation(STEPS)
    html = staff_client.get(f"/admin/automations/automation/{automation.pk}/change/").content.decode()
    assert f'href="/automation?uuid={automation.uuid}"' in html and "View diagram" in html


def test_the_page_is_german_for_a_german_browser(client, owner, make_automation):
    client.force_login(owner)
    html = client.get(url(make_automation(STEPS)), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Auslöser und Schritte" in html


@given(st.text(max_size=80))
def test_only_canonical_uuids_parse(value):
    parsed = drawing.parse_uuid(value)
    assert parsed is None or str(parsed) == value


def test_bidirectional_controls_in_a_runs_error_and_settings_are_neutralised(client, owner, make_automation):
    automation = make_automation([{"id": "answer", "kind": "respond", "status": 200, "body": "pay \u202eevil"}])
    Run.objects.create(
        automation=automation,
        source="webhook",
        status="failed",
        definition=automation.definition,
        steps=[{"id": "answer", "kind": "respond", "status": "failed", "error": "no \u2066way"}],
    )
    client.force_login(owner)
    page = client.get(url(automation)).content.decode()
    assert "\u202e" not in page and "\u2066" not in page
    assert "<bdi>no \ufffdway</bdi>" in page and "pay \ufffdevil" in page
