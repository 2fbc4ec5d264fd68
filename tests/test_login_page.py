"""/login and /logout: Django's sign-in in the pages' look, throttled like admin's, ?next= only to this site."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounts.sign_in import is_local_path

pytestmark = pytest.mark.django_db


@pytest.fixture
def limits(settings):
    settings.SIGN_IN_RATE_USERNAME = "3/15m"
    settings.SIGN_IN_RATE_IP = "5/15m"


@pytest.fixture
def ada(django_user_model):
    return django_user_model.objects.create_user("ada", "ada@example.com", "correct-horse-battery")


def sign_in(client, username, password, ip="198.51.100.1", next_url=None):
    data = {"username": username, "password": password}
    if next_url is not None:
        data["next"] = next_url
    return client.post("/login", data, REMOTE_ADDR=ip)


def failed(response) -> bool:
    return response.status_code == 200 and b"Please enter a correct email and password" in response.content


def test_the_sign_in_page_ties_each_label_to_its_input(client):
    html = client.get("/login").content.decode()
    assert '<label for="id_username"' in html and 'id="id_username"' in html
    assert '<label for="id_password"' in html and 'id="id_password"' in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_a_correct_sign_in_goes_to_the_relative_next(client, ada):
    response = sign_in(client, "ada", "correct-horse-battery", next_url="/automation?uuid=abc")
    assert response.status_code == 302
    assert response["Location"] == "/automation?uuid=abc"
    assert client.session["_auth_user_id"] == str(ada.pk)


def test_a_wrong_password_keeps_the_visitor_on_the_page_with_the_error(client, ada):
    response = sign_in(client, "ada", "wrong")
    assert failed(response)
    assert 'role="alert"' in response.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize(
    "next_url",
    [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "http://testserver/admin/",  # this very host, but absolute: only paths are followed
        "javascript:alert(1)",
        "/\tevil",
        "",
    ],
)
def test_an_off_site_or_absolute_next_is_ignored(client, ada, next_url):
    response = sign_in(client, "ada", "correct-horse-battery", next_url=next_url)
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.session["_auth_user_id"] == str(ada.pk)


def test_an_off_site_next_is_not_carried_into_the_form(client):
    html = client.get("/login?next=https://evil.example/").content.decode()
    assert "evil.example" not in html
    assert 'value="/form/run/x"' in client.get("/login?next=/form/run/x").content.decode()


def test_the_nth_sign_in_for_a_user_name_is_refused_with_a_page(client, limits, ada):
    for n, name in enumerate(["ada", "Ada", " ADA "]):
        assert failed(sign_in(client, name, "wrong", ip=f"198.51.100.{n + 1}"))
    refused = sign_in(client, "ada", "correct-horse-battery", ip="198.51.100.9")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 900
    assert "Too many sign-in attempts" in refused.content.decode()
    assert refused["Content-Type"].startswith("text/html")
    assert "_auth_user_id" not in client.session
    assert failed(sign_in(client, "grace", "wrong", ip="198.51.100.9"))


def test_the_nth_sign_in_from_an_ip_is_refused(client, limits, ada):
    for n in range(5):
        assert failed(sign_in(client, f"name-{n}", "wrong", ip="203.0.113.7"))
    assert sign_in(client, "ada", "correct-horse-battery", ip="203.0.113.7").status_code == 429
    assert "_auth_user_id" not in client.session
    assert sign_in(client, "ada", "correct-horse-battery", ip="203.0.113.8").status_code == 302


def test_sign_in_and_admin_sign_in_share_one_budget(client, limits, ada):
    for n in range(5):
        client.post("/admin/login/", {"username": f"x{n}", "password": "wrong"}, REMOTE_ADDR="203.0.113.20")
    assert sign_in(client, "ada", "correct-horse-battery", ip="203.0.113.20").status_code == 429


def test_sign_out_takes_a_post_with_csrf(ada):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(ada)
    assert client.get("/logout").status_code == 405
    assert client.post("/logout").status_code == 403
    assert "_auth_user_id" in client.session
    page = client.get("/")
    token = page.cookies["csrftoken"].value if "csrftoken" in page.cookies else client.cookies["csrftoken"].value
    response = client.post("/logout", {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert response["Location"] == "/login"
    assert "_auth_user_id" not in client.session


def test_a_signed_in_page_offers_sign_out_as_a_form(client, ada):
    client.force_login(ada)
    html = client.get("/").content.decode()
    assert '<form class="sign-out" method="post" action="/logout">' in html


@given(st.text())
def test_only_paths_of_this_site_count_as_local(url):
    if is_local_path(url):
        assert url.startswith("/") and not url.startswith("//")
        assert "\\" not in url and all(ord(char) >= 32 for char in url)
