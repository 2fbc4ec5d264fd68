"""Trigger data (SPEC 2.3) from a stored delivery or a web service request: body, params, query_string, content_type, path.

Decisions (docs/webhooks.md): the body is decoded as UTF-8, or as the
charset its Content-Type names; bytes that do not decode become U+FFFD.
Text that parses as JSON is JSON, whatever the Content-Type says (senders
often mislabel it); anything else, form-encoded and multipart bodies
included, is the raw string. A parameter given once is a string, given
several times a list. Headers never reach the steps.
"""
import codecs
import json
from urllib.parse import parse_qs


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            try:
                return codecs.lookup(value.strip().strip('"')).name
            except LookupError:
                break
    return "utf-8"


def parse_body(body: bytes, content_type: str):
    text = body.decode(_charset(content_type), errors="replace")
    text = text.removeprefix("\ufeff")
    if text.strip():
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def parse_params(query_string: str) -> dict:
    parsed = parse_qs(query_string, keep_blank_values=True)
    return {name: values[0] if len(values) == 1 else values for name, values in parsed.items()}


def trigger_data(*, body: bytes, content_type: str, query_string: str, path: str) -> dict:
    return {
        "body": parse_body(body, content_type),
        "params": parse_params(query_string),
        "query_string": query_string,
        "content_type": content_type,
        "path": path,
    }
