"""import_automation and export_automation: the same document in and out."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from automations import services
from automations.models import Automation
from hooks.tests.test_processing import RECORD

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "name": "Record signups",
    "trigger": {"type": "webhook"},
    "steps": RECORD,
    "settings": {"suppress_duplicates": False},
}


def run(*args):
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_import_creates_prints_the_urls_and_export_writes_the_same_document(tmp_path, owner):
    source = tmp_path / "a.json"
    source.write_text(json.dumps(DOCUMENT))
    printed = run("import_automation", str(source), "--owner", "owner", "--on")
    automation = Automation.objects.get()
    assert automation.enabled and automation.name == "Record signups"
    assert services.hook_url(automation) in printed
    assert services.web_service_url(automation) in printed
    assert json.loads(run("export_automation", str(automation.pk))) == DOCUMENT


def test_import_again_updates_by_owner_and_name_and_keeps_the_urls(tmp_path, owner):
    source = tmp_path / "a.json"
    source.write_text(json.dumps(DOCUMENT))
    run("import_automation", str(source), "--owner", "owner")
    url = services.hook_url(Automation.objects.get())
    source.write_text(json.dumps({**DOCUMENT, "steps": RECORD[:1]}))
    assert "updated automation" in run("import_automation", str(source), "--owner", "owner")
    automation = Automation.objects.get()
    assert len(automation.definition["steps"]) == 1
    assert services.hook_url(automation) == url


def test_a_bad_document_is_rejected_with_paths_and_changes_nothing(tmp_path, owner):
    source = tmp_path / "bad.json"
    source.write_text(json.dumps({**DOCUMENT, "steps": [{"id": "x", "kind": "respond", "status": 1}]}))
    with pytest.raises(CommandError, match=r"\$\.steps\[0\]\.status"):
        run("import_automation", str(source), "--owner", "owner")
    assert not Automation.objects.exists()


def test_import_needs_a_known_owner_and_a_name(tmp_path, owner):
    source = tmp_path / "a.json"
    source.write_text(json.dumps({k: v for k, v in DOCUMENT.items() if k != "name"}))
    with pytest.raises(CommandError, match="name"):
        run("import_automation", str(source), "--owner", "owner")
    with pytest.raises(CommandError, match="no user"):
        run("import_automation", str(source), "--owner", "nobody", "--name", "x")


@pytest.mark.parametrize(
    "written, said",
    [
        ('"x": NaN', "$.steps[0].values.x: NaN is not a number"),
        ('"x": -Infinity', "$.steps[0].values.x: -Infinity is not a number"),
        ('"x": "a\\u0000b"', "$.steps[0].values.x: a NUL character"),
    ],
)
def test_import_refuses_what_no_database_stores_with_its_path(tmp_path, owner, written, said):
    source = tmp_path / "odd.json"
    source.write_text(
        '{"name": "Odd", "trigger": {"type": "webhook"}, "steps": [{"id": "s", "kind": "set_values", "values": {'
        + written
        + "}}]}"
    )
    with pytest.raises(CommandError, match="rejected") as refused:
        run("import_automation", str(source), "--owner", "owner")
    assert said in str(refused.value)
    assert not Automation.objects.exists()


def test_import_refuses_a_file_that_is_not_utf8_and_a_name_too_long(tmp_path, owner):
    source = tmp_path / "latin.json"
    source.write_bytes(b"\xff\xfe{}")
    with pytest.raises(CommandError, match="not UTF-8"):
        run("import_automation", str(source), "--owner", "owner")
    source.write_text(json.dumps(DOCUMENT))
    with pytest.raises(CommandError, match="at most 200 characters"):
        run("import_automation", str(source), "--owner", "owner", "--name", "y" * 300)
    assert not Automation.objects.exists()


def test_export_to_a_path_it_cannot_write_says_so(tmp_path, make_automation):
    automation = make_automation(RECORD)
    for unwritable in (tmp_path / "missing" / "x.json", tmp_path):
        with pytest.raises(CommandError, match="cannot write"):
            run("export_automation", str(automation.pk), "--output", str(unwritable))
