"""manage.py import_catalog: idempotent by slug, reports changes, rejects bad documents whole."""

import json

import pytest
from django.core.management import CommandError, call_command

from catalog.importer import InvalidCatalog, import_catalog
from catalog.models import App, Operation
from conftest import app_doc


def write(tmp_path, document) -> str:
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_it_creates_apps_and_operations(db):
    report = import_catalog({"apps": [app_doc("alpha"), app_doc("beta")]})
    assert report.created == ["alpha", "beta"]
    assert report.operations_created == 4
    operation = Operation.objects.get(app__slug="alpha", kind="trigger")
    assert operation.endpoint == "https://internal.alpha.example/hooks"
    assert operation.delivery_mode == "self_registering"
    assert operation.instructions == "internal-instructions of alpha: paste the URL under Settings > Webhooks."
    assert App.objects.get(slug="alpha").auth_config == {"client_secret": "secret-of-alpha"}


def updated_at() -> list:
    return [*App.objects.values_list("updated_at", flat=True), *Operation.objects.values_list("updated_at", flat=True)]


def test_importing_the_same_document_twice_changes_nothing(db):
    document = {"apps": [app_doc("alpha"), app_doc("beta")]}
    import_catalog(document)
    stamps = updated_at()
    report = import_catalog(document)
    assert (report.created, report.updated, report.unchanged) == ([], [], ["alpha", "beta"])
    assert not report.changed
    assert updated_at() == stamps


def test_it_updates_by_slug_and_syncs_operations(db):
    import_catalog({"apps": [app_doc("alpha")]})
    changed = app_doc("alpha", name="Alpha 2", actions=[{"key": "archive", "name": "Archive"}])
    report = import_catalog({"apps": [changed]})
    assert report.updated == ["alpha"]
    assert (report.operations_created, report.operations_deleted) == (1, 1)
    assert list(Operation.objects.filter(app__slug="alpha", kind="action").values_list("key", flat=True)) == ["archive"]


def test_removing_an_operation_touches_last_updated(db):
    import_catalog({"apps": [app_doc("alpha")]})
    before = App.objects.get(slug="alpha").updated_at
    import_catalog({"apps": [app_doc("alpha", actions=[])]})
    assert App.objects.get(slug="alpha").updated_at > before


def test_apps_left_out_of_the_document_are_untouched(db):
    import_catalog({"apps": [app_doc("alpha"), app_doc("beta")]})
    import_catalog({"apps": [app_doc("alpha")]})
    assert App.objects.filter(slug="beta").exists()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({}, "$: 'apps' is a required property"),
        ({"apps": [app_doc("Bad Slug")]}, "$.apps[0].slug: 'Bad Slug' does not match"),
        (
            {"apps": [app_doc("ok"), app_doc("two", triggers=[{"key": "k"}])]},
            "$.apps[1].triggers[0]: 'name' is a required property",
        ),
        ({"apps": [app_doc("ok", popularity=-1)]}, "$.apps[0].popularity: -1 is less than the minimum of 0"),
        (
            {"apps": [app_doc("ok", surprise=1)]},
            "$.apps[0]: Additional properties are not allowed ('surprise' was unexpected)",
        ),
        ({"apps": [app_doc("dup"), app_doc("dup")]}, "$.apps[1].slug: 'dup' already appears at $.apps[0]"),
        ({"apps": [app_doc("ok", retired_at="last tuesday")]}, "$.apps[0].retired_at: not an RFC 3339 time"),
        (
            {"apps": [app_doc("ok", logo={"content_type": "image/png", "base64": "%%%"})]},
            "$.apps[0].logo.base64: not valid base64",
        ),
        (
            {"apps": [app_doc("ok", actions=[{"key": "a", "name": "A"}, {"key": "a", "name": "B"}])]},
            "$.apps[0].actions[1].key: 'a' already appears",
        ),
    ],
)
def test_it_rejects_bad_documents_with_the_path_of_the_error(db, document, message):
    with pytest.raises(InvalidCatalog) as error:
        import_catalog(document)
    assert any(line.startswith(message) for line in error.value.errors), error.value.errors


def test_a_rejected_document_changes_nothing(db):
    import_catalog({"apps": [app_doc("alpha")]})
    with pytest.raises(InvalidCatalog):
        import_catalog({"apps": [app_doc("alpha", name="Changed"), app_doc("bad", popularity="many")]})
    assert App.objects.get(slug="alpha").name == "Alpha"
    assert not App.objects.filter(slug="bad").exists()


def test_the_command_reports_what_changed_and_builds_the_feed(db, tmp_path, capsys, client):
    path = write(tmp_path, {"apps": [app_doc("alpha")]})
    call_command("import_catalog", path)
    out = capsys.readouterr().out
    assert "apps: 1 created, 0 updated, 0 unchanged; operations: 2 created, 0 updated, 0 deleted" in out
    assert "feed: 1 apps (rebuilt)" in out
    assert client.get("/catalog/v1/apps/alpha").status_code == 200
    call_command("import_catalog", path)
    assert "0 created, 0 updated, 1 unchanged" in capsys.readouterr().out


def test_the_command_rejects_bad_input_with_a_clear_error(db, tmp_path):
    with pytest.raises(CommandError, match="nothing changed:\n\\$.apps\\[0\\].slug"):
        call_command("import_catalog", write(tmp_path, {"apps": [app_doc("UPPER")]}))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CommandError, match="not JSON"):
        call_command("import_catalog", str(bad))
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_catalog", str(tmp_path / "missing.json"))


def test_the_demo_catalog_is_valid_and_shows_every_state(db):
    from catalog.demo import demo_document
    from catalog.feed import build_feed

    document = demo_document(apps=240)
    report = import_catalog(document)
    assert len(report.created) == 240
    assert demo_document(apps=240) == document
    assert build_feed().count == 238  # one unpublished, one retired past the window
    assert App.objects.filter(tier="D").exists() and App.objects.filter(tier="A").exists()
    assert App.objects.filter(logo__isnull=True).exists()
    assert Operation.objects.count() > 240 * 3


def test_the_command_refuses_what_no_database_stores_and_text_that_is_not_utf8(tmp_path, db):
    nul = {"apps": [{**app_doc("nul"), "name": "x\x00y", "auth_config": {"n": float("nan")}}]}
    with pytest.raises(CommandError, match="nothing changed") as refused:
        call_command("import_catalog", write(tmp_path, nul))
    assert "$.apps[0].name: a NUL character" in str(refused.value)
    assert "$.apps[0].auth_config.n: NaN is not a number" in str(refused.value)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b"\xff\xfe{}")
    with pytest.raises(CommandError, match="not UTF-8"):
        call_command("import_catalog", str(latin))
    assert not App.objects.exists()


def test_load_demo_refuses_negative_counts_and_a_path_it_cannot_write(tmp_path, db):
    for option in (["--apps", "-1"], ["--operations", "-5"], ["--apps", "0"]):
        with pytest.raises(CommandError, match="must be"):
            call_command("load_demo", *option)
    with pytest.raises(CommandError, match="cannot write"):
        call_command("load_demo", "--apps", "2", "--write", str(tmp_path / "missing" / "x.json"))
    assert not App.objects.exists()


def test_load_demo_first_time_leaves_a_catalog_staff_edited(db):
    call_command("load_demo", "--apps", "3", "--first-time")
    App.objects.filter(slug=App.objects.first().slug).update(name="Renamed in admin")
    call_command("load_demo", "--apps", "3", "--first-time")
    assert App.objects.filter(name="Renamed in admin").exists()
    call_command("load_demo", "--apps", "3")
    assert not App.objects.filter(name="Renamed in admin").exists()
