"""The feed never exposes endpoints, request bodies, credentials or internal identifiers."""

import gzip
import json

from catalog.bulk import build_bulk
from catalog.entries import DETAIL_FIELDS, SUMMARY_FIELDS

INTERNAL_VALUES = (
    "internal.",
    "secret-of-",
    "{{internal}}",
    "self_registering",
    "client_secret",
    "new_thing",
    "create_thing",
    "internal-instructions",
)


def test_no_internal_field_or_value_appears_in_any_body(client, three_apps):
    build_bulk()
    bodies = {
        "list": client.get("/catalog/v1/apps").content,
        "detail": client.get("/catalog/v1/apps/alpha").content,
        "bulk": client.get("/catalog/v1/bulk").content,
        "bulk-gzip": gzip.decompress(client.get("/catalog/v1/bulk", HTTP_ACCEPT_ENCODING="gzip").content),
    }
    for name, body in bodies.items():
        for value in INTERNAL_VALUES:
            assert value.encode() not in body, (name, value)
    assert set(json.loads(bodies["detail"])) == set(DETAIL_FIELDS) - {"retired_at"}
    for entry in json.loads(bodies["list"])["apps"]:
        assert set(entry) == set(SUMMARY_FIELDS) - {"retired_at"}
    for entry in json.loads(bodies["bulk"])["apps"]:
        assert set(entry) == set(DETAIL_FIELDS) - {"retired_at"}
        for operation in entry["triggers"] + entry["actions"]:
            assert set(operation) == {"name", "description"}
