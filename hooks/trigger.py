"""Trigger data (SPEC 2.3) from a stored delivery or a web service request.

Its fields: body, params, query_string, content_type, path.

Decisions (docs/webhooks.md): the body is decoded as UTF-8, or as the
charset its Content-Type names when that is a text encoding Python knows;
bytes that do not decode become U+FFFD. Text that parses as JSON is JSON,
whatever the Content-Type says (senders often mislabel it); anything else,
form-encoded and multipart bodies included, is the raw string. A parameter
given once is a string, given several times a list. Headers never reach the
steps. Whatever bytes arrived, the result is storable (automations/jsonsafe.py):
a delivery whose trigger data could not be stored would never run.
"""

import codecs
from urllib.parse import parse_qs

from automations import jsonsafe


def _codec(content_type: str) -> str:
    """The charset the Content-Type names, if it is a text encoding; UTF-8 otherwise.

    Python's codec registry also holds bytes-to-bytes and str-to-str
    transforms (hex, base64, zlib, rot13) that are no charset at all.
    """
    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            try:
                codec = codecs.lookup(value.strip().strip('"'))
                "".encode(codec.name)  # str.encode refuses a codec that is no text encoding, with LookupError
            except LookupError:
                break
            return codec.name
    return "utf-8"


def decode(body: bytes, content_type: str) -> str:
    try:
        text = body.decode(_codec(content_type), errors="replace")
    except (UnicodeError, ValueError, TypeError):  # a codec without the replace handler (idna, punycode)
        text = body.decode("utf-8", errors="replace")
    return text.removeprefix("\ufeff")


def parse_body(body: bytes, content_type: str):
    text = decode(body, content_type)
    if text.strip():
        try:
            return jsonsafe.clean(jsonsafe.loads(text))
        except ValueError:
            pass
    return jsonsafe.clean_text(text)


def parse_params(query_string: str) -> dict:
    parsed = parse_qs(query_string, keep_blank_values=True)
    return jsonsafe.clean({name: values[0] if len(values) == 1 else values for name, values in parsed.items()})


def trigger_data(*, body: bytes, content_type: str, query_string: str, path: str) -> dict:
    return {
        "body": parse_body(body, content_type),
        "params": parse_params(query_string),
        "query_string": jsonsafe.clean_text(query_string),
        "content_type": jsonsafe.clean_text(content_type),
        "path": jsonsafe.clean_text(path),
    }
