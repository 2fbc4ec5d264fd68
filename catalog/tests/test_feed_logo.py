"""GET /catalog/v1/apps/{slug}/logo: the stored icon bytes."""

import base64

from catalog.models import App
from conftest import app_doc

SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


def test_it_serves_the_stored_bytes_with_their_type(client, make_catalog):
    make_catalog(app_doc("pic", logo={"content_type": "image/svg+xml", "base64": base64.b64encode(SVG).decode()}))
    response = client.get("/catalog/v1/apps/pic/logo")
    assert response.status_code == 200
    assert response.content == SVG
    assert response["Content-Type"] == "image/svg+xml"
    assert response["Cache-Control"] == "public, max-age=86400, immutable"
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "sandbox" in response["Content-Security-Policy"]
    assert response["X-Content-Type-Options"] == "nosniff"


def test_it_answers_304_for_the_logo_etag(client, make_catalog):
    make_catalog(app_doc("pic"))
    etag = client.get("/catalog/v1/apps/pic/logo")["ETag"]
    assert client.get("/catalog/v1/apps/pic/logo", HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_an_app_with_no_logo_gets_404(client, make_catalog):
    make_catalog(app_doc("plain", logo=None))
    response = client.get("/catalog/v1/apps/plain/logo")
    assert response.status_code == 404
    assert response.content == b""
    assert response["Access-Control-Allow-Origin"] == "*"


def test_apps_outside_the_feed_get_404(client, make_catalog):
    make_catalog(app_doc("shown"), app_doc("draft", published=False))
    assert client.get("/catalog/v1/apps/draft/logo").status_code == 404
    assert client.get("/catalog/v1/apps/nobody/logo").status_code == 404
    assert client.get("/catalog/v1/apps/Shown/logo").status_code == 404


def test_head_and_other_methods(client, make_catalog):
    make_catalog(app_doc("pic"))
    head = client.head("/catalog/v1/apps/pic/logo")
    assert head.status_code == 200 and head.content == b""
    assert int(head["Content-Length"]) == len(bytes(App.objects.get(slug="pic").logo))
    response = client.post("/catalog/v1/apps/pic/logo")
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"
