"""Trigger data (SPEC 2.3) from what a sender sent."""

import pytest

from hooks.trigger import parse_body, parse_params, trigger_data


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (b'{"a": {"b": [1, 2]}}', "application/json", {"a": {"b": [1, 2]}}),
        (b'{"a": 1}', "text/plain", {"a": 1}),  # mislabelled JSON is still JSON
        (b"[1, 2]", "", [1, 2]),
        (b'\xef\xbb\xbf{"a": 1}', "application/json", {"a": 1}),  # a UTF-8 byte order mark
        (b"a=1&b=2", "application/x-www-form-urlencoded", "a=1&b=2"),
        (b"hello", "text/plain", "hello"),
        (b"", "", ""),
        (b"{not json", "application/json", "{not json"),
        ("caf\u00e9".encode("latin-1"), "text/plain; charset=ISO-8859-1", "caf\u00e9"),
        (b"caf\xe9", "text/plain", "caf\ufffd"),  # not UTF-8, no charset: the bad byte becomes U+FFFD
        (b"x", "text/plain; charset=no-such-charset", "x"),
    ],
)
def test_the_body_is_json_when_it_parses_and_the_raw_text_otherwise(body, content_type, expected):
    assert parse_body(body, content_type) == expected


def test_params_are_strings_or_lists_when_repeated():
    assert parse_params("a=1&b=&c=x&c=y&d=%C3%A9") == {"a": "1", "b": "", "c": ["x", "y"], "d": "\u00e9"}


def test_trigger_data_has_exactly_the_fields_of_the_spec_and_no_headers():
    data = trigger_data(body=b"{}", content_type="application/json", query_string="a=1", path="/automation-k")
    assert set(data) == {"body", "params", "query_string", "content_type", "path"}
