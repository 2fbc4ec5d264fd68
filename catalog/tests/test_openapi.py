"""The OpenAPI document at /catalog/v1/openapi.json matches the running feed (checked with schemathesis)."""

import json

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from catalog.bulk import build_bulk
from catalog.feed import build_feed
from catalog.importer import import_catalog
from conftest import app_doc

schema = schemathesis.pytest.from_fixture("feed_schema")


@pytest.fixture
def feed_schema(live_server, settings, transactional_db):
    settings.BASE_URL = live_server.url
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
    settings.RATELIMIT_ENABLE = False
    retiree = app_doc("retiree", retired_at="2026-11-01T00:00:00+00:00")
    import_catalog({"apps": [app_doc("alpha"), retiree, app_doc("bare", logo=None)]})
    build_feed()
    build_bulk()
    return schemathesis.openapi.from_url(f"{live_server.url}/catalog/v1/openapi.json")


@schema.parametrize()
@hypothesis_settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_feed_conforms_to_its_openapi_document(case):
    case.call_and_validate()


def test_the_document_names_every_route(client, db):
    document = json.loads(client.get("/catalog/v1/openapi.json").content)
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]) == {"/apps", "/apps/{slug}", "/apps/{slug}/logo", "/bulk"}
    assert document["servers"] == [{"url": "http://testserver/catalog/v1"}]


@pytest.mark.parametrize("path", ["/catalog/v1/", "/catalog/v1/openapi.json"])
def test_the_routes_and_the_openapi_document_carry_an_etag_and_answer_304_to_it(client, path):
    response = client.get(path)
    assert response.status_code == 200 and response["ETag"].startswith('"')
    again = client.get(path, HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304 and again.content == b""
