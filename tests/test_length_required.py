"""edge/length_required.py: a chunked body gets 411 where Django would read it as none, and reaches the hook URLs."""

import pytest

pytestmark = pytest.mark.django_db
CHUNKED = {"CONTENT_LENGTH": "", "HTTP_TRANSFER_ENCODING": "chunked"}


@pytest.mark.parametrize(
    "path", ["/moderation/api?queue=k", "/webchat/k/messages", "/oauth/client", "/oauth/token", "/login", "/mcp"]
)
def test_a_chunked_body_where_django_reads_bodies_gets_411_in_the_shape_of_the_endpoints_errors(client, path):
    response = client.post(path, b'{"text": "hello"}', content_type="application/json", **CHUNKED)
    assert response.status_code == 411
    message = "send the request body with a Content-Length header"
    if path.startswith("/oauth/"):
        assert response.json() == {"error": "invalid_request", "error_description": message}
    else:
        assert response.json() == {"error": message}
    page = client.post("/login", "a=1", content_type="application/x-www-form-urlencoded", **CHUNKED)
    assert (page.status_code, page.content) == (411, f"{message}\n".encode())


def test_a_body_with_a_content_length_is_not_refused(client):
    assert client.post("/moderation/api?queue=k", b"{}", content_type="application/json").status_code == 404


# Web service URLs too: through real servers in hooks/tests/test_bodies_on_servers.py (the test client's
# payload cannot be read to its end as a chunked one is).
@pytest.mark.parametrize("path", ["/automation-nobodys", "/webhook/automation-nobodys"])
def test_webhook_urls_read_chunked_bodies_themselves(hooks_client, path):
    assert hooks_client.post(path, b"{}", content_type="application/json", **CHUNKED).status_code == 404
