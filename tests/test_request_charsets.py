"""Requests whose Content-Type names a charset Django cannot decode with are read as UTF-8, not answered 500; form
data declared in another charset than UTF-8 is a 400, as Django answers it."""

import io

import pytest

from overrides.wsgi_request import Request


def request_with(content_type: str) -> Request:
    return Request(
        {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/anything",
            "QUERY_STRING": "a=%C3%A9&b=2",
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "wsgi.url_scheme": "http",
            "CONTENT_TYPE": content_type,
            "CONTENT_LENGTH": "3",
            "wsgi.input": io.BytesIO(b"c=3"),
        }
    )


@pytest.mark.parametrize(
    "charset",
    ["hex", "base64", "rot13", "zlib", "bz2", "idna", "punycode", "utf-16", "utf-32", "undefined", "no-such-charset"],
)
def test_a_charset_django_cannot_decode_with_is_ignored(charset):
    request = request_with(f"application/x-www-form-urlencoded; charset={charset}")
    assert request.encoding is None
    assert request.GET.dict() == {"a": "\u00e9", "b": "2"}
    assert request.POST.dict() == {"c": "3"}


@pytest.mark.parametrize("charset", ["latin-1", "utf-8", "cp1252", "ascii"])
def test_a_text_charset_is_still_taken(charset):
    request = request_with(f"application/x-www-form-urlencoded; charset={charset}")
    assert request.encoding == charset
    assert request.GET["b"] == "2"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/login", "/moderation?queue=no-such-key"])
def test_form_data_in_another_charset_than_utf8_is_a_400_not_a_500(path):
    from edge.handler import Handler

    started = []
    path, _, query = path.partition("?")
    environ = {
        **request_with("application/x-www-form-urlencoded; charset=latin-1").environ,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "HTTP_COOKIE": "csrftoken=abcdefghijklmnopqrstuvwxyzABCDEF",
        "wsgi.input": io.BytesIO(b"c=3"),
        "wsgi.errors": io.StringIO(),
    }
    Handler()(environ, lambda status, headers, exc_info=None: started.append(status))
    assert started == ["400 Bad Request"]  # its CSRF check read the form again: the same error, a 500


@pytest.mark.parametrize("charset", ["utf8", "UTF8", "utf_8", "U8"])
def test_form_data_in_another_spelling_of_utf8_is_read(charset):
    request = request_with(f"application/x-www-form-urlencoded; charset={charset}")
    assert request.POST.dict() == {"c": "3"}
