"""Django admin for staff: search, filters, inline operations, logo upload with preview, retire action."""

import base64
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from catalog.models import App, FeedDocument

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def test_staff_can_search_and_filter_apps(staff_client, three_apps):
    response = staff_client.get("/admin/catalog/app/", {"q": "beta"})
    assert response.status_code == 200
    assert b"Beta" in response.content and b"Gamma" not in response.content
    for query in ({"tier": "D"}, {"category": "CRM"}, {"auth_type": "oauth_v2"}, {"retired": "no"}, {"retired": "yes"}):
        assert staff_client.get("/admin/catalog/app/", query).status_code == 200
    assert b"Gamma" in staff_client.get("/admin/catalog/app/", {"tier": "D"}).content


def test_the_change_page_shows_operations_and_the_logo_preview(staff_client, three_apps):
    app = App.objects.get(slug="alpha")
    response = staff_client.get(f"/admin/catalog/app/{app.pk}/change/")
    assert response.status_code == 200
    assert b"New Thing" in response.content
    assert b'src="data:image/png;base64,' in response.content


def _form_data(app, **changes):
    operations = list(app.operations.all())
    data = {
        "slug": app.slug,
        "name": app.name,
        "description": app.description,
        "category": app.category or "",
        "auth_type": app.auth_type,
        "app_domain": app.app_domain,
        "published": "on",
        "popularity": app.popularity,
        "retired_at_0": "",
        "retired_at_1": "",
        "auth_config": json.dumps(app.auth_config),
        "operations-TOTAL_FORMS": len(operations),
        "operations-INITIAL_FORMS": len(operations),
        "operations-MIN_NUM_FORMS": 0,
        "operations-MAX_NUM_FORMS": 1000,
    }
    for i, op in enumerate(operations):
        data.update(
            {
                f"operations-{i}-id": op.pk,
                f"operations-{i}-app": app.pk,
                f"operations-{i}-kind": op.kind,
                f"operations-{i}-key": op.key,
                f"operations-{i}-name": op.name,
                f"operations-{i}-description": op.description,
                f"operations-{i}-position": op.position,
                f"operations-{i}-listed": "on" if op.listed else "",
                f"operations-{i}-delivery_mode": op.delivery_mode,
                f"operations-{i}-http_method": op.http_method,
                f"operations-{i}-endpoint": op.endpoint,
            }
        )
    data.update(changes)
    return data


def test_uploading_a_logo_stores_its_bytes_and_rebuilds_the_feed(
    staff_client, three_apps, client, django_capture_on_commit_callbacks
):
    from config.celery import app as celery_app

    app = App.objects.get(slug="gamma")
    data = _form_data(app, logo_file=SimpleUploadedFile("g.png", PNG, content_type="image/png"))
    celery_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = staff_client.post(f"/admin/catalog/app/{app.pk}/change/", data)
    finally:
        celery_app.conf.task_always_eager = False
    assert response.status_code == 302, response.content
    app.refresh_from_db()
    assert bytes(app.logo) == PNG and app.logo_content_type == "image/png"
    logo = client.get("/catalog/v1/apps/gamma/logo")
    assert logo.status_code == 200 and logo.content == PNG


def test_a_logo_of_the_wrong_type_is_refused(staff_client, three_apps):
    app = App.objects.get(slug="gamma")
    data = _form_data(app, logo_file=SimpleUploadedFile("g.exe", b"MZ", content_type="application/x-msdownload"))
    response = staff_client.post(f"/admin/catalog/app/{app.pk}/change/", data)
    assert response.status_code == 200
    assert b"Unsupported type" in response.content
    app.refresh_from_db()
    assert app.logo is None


def test_editing_an_operation_inline_changes_the_feed(staff_client, three_apps, django_capture_on_commit_callbacks):
    from config.celery import app as celery_app

    app = App.objects.get(slug="alpha")
    data = _form_data(app)
    index = next(i for i, op in enumerate(app.operations.all()) if op.kind == "trigger")
    data[f"operations-{index}-name"] = "Renamed Trigger"
    celery_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert staff_client.post(f"/admin/catalog/app/{app.pk}/change/", data).status_code == 302
    finally:
        celery_app.conf.task_always_eager = False
    assert b"Renamed Trigger" in bytes(FeedDocument.objects.get(key="app:alpha").body)


def test_saving_an_unchanged_app_leaves_last_updated_alone(staff_client, three_apps):
    app = App.objects.get(slug="alpha")
    before = app.updated_at
    assert staff_client.post(f"/admin/catalog/app/{app.pk}/change/", _form_data(app)).status_code == 302
    app.refresh_from_db()
    assert app.updated_at == before


def test_the_retire_action_marks_apps_retired(staff_client, three_apps):
    ids = list(App.objects.filter(slug__in=["beta", "gamma"]).values_list("pk", flat=True))
    response = staff_client.post("/admin/catalog/app/", {"action": "retire", "_selected_action": ids})
    assert response.status_code == 302
    assert set(App.objects.filter(retired_at__isnull=False).values_list("slug", flat=True)) == {"beta", "gamma"}
    staff_client.post("/admin/catalog/app/", {"action": "unretire", "_selected_action": ids[:1]})
    assert App.objects.filter(retired_at__isnull=False).count() == 1


def test_signed_out_visitors_are_sent_to_the_admin_login(client, three_apps):
    response = client.get("/admin/catalog/app/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


@pytest.mark.parametrize("field, value", [("key", "k<script>"), ("key", "Upper"), ("http_method", "FOO")])
def test_an_operation_breaking_the_importers_rules_is_refused(staff_client, three_apps, field, value):
    app = App.objects.get(slug="gamma")
    added = {"kind": "action", "key": "send", "name": "Send", "position": 0, "delivery_mode": "", "http_method": "POST"}
    data = _form_data(app, **{f"operations-0-{name}": value for name, value in {**added, field: value}.items()})
    data.update({"operations-TOTAL_FORMS": 1, "operations-INITIAL_FORMS": 0, "operations-0-app": app.pk})
    response = staff_client.post(f"/admin/catalog/app/{app.pk}/change/", data)
    assert response.status_code == 200
    assert not app.operations.exists()
    data[f"operations-0-{field}"] = added[field]
    assert staff_client.post(f"/admin/catalog/app/{app.pk}/change/", data).status_code == 302
    assert app.operations.get().key == "send"


@pytest.mark.parametrize(
    "odd", ['{"k": NaN}', '{"k": "x\\u0000y"}', "[" * 100_000 + "]" * 100_000], ids=["nan", "nul", "100000 deep"]
)
def test_app_settings_no_database_stores_are_refused(staff_client, three_apps, odd):
    app = App.objects.get(slug="gamma")
    response = staff_client.post(f"/admin/catalog/app/{app.pk}/change/", _form_data(app, auth_config=odd))
    assert response.status_code == 200 and response.context["adminform"].form.errors["auth_config"]
