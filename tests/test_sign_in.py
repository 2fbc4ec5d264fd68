"""Admin's sign-in is throttled per client IP and per user name; a correct sign-in within the limits works."""

import pytest

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"


@pytest.fixture
def limits(settings):
    settings.SIGN_IN_RATE_USERNAME = "3/15m"
    settings.SIGN_IN_RATE_IP = "5/15m"


@pytest.fixture
def ada(django_user_model):
    return django_user_model.objects.create_superuser("ada", "ada@example.com", "correct-horse-battery")


def sign_in(client, username, password, ip="198.51.100.1", **extra):
    return client.post(LOGIN, {"username": username, "password": password, "next": "/admin/"}, REMOTE_ADDR=ip, **extra)


def failed(response) -> bool:
    return response.status_code == 200 and b"Please enter the correct username and password" in response.content


def test_the_nth_failed_sign_in_for_a_user_name_is_refused(client, limits, ada):
    for n, name in enumerate(["ada", "Ada", " ADA "]):
        assert failed(sign_in(client, name, "wrong", ip=f"198.51.100.{n + 1}"))
    refused = sign_in(client, "ada", "correct-horse-battery", ip="198.51.100.9")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 900
    assert "_auth_user_id" not in client.session
    assert failed(sign_in(client, "grace", "wrong", ip="198.51.100.9"))


def test_the_nth_failed_sign_in_from_an_ip_is_refused(client, limits, ada):
    for n in range(5):
        assert failed(sign_in(client, f"name-{n}", "wrong", ip="203.0.113.7"))
    assert sign_in(client, "ada", "correct-horse-battery", ip="203.0.113.7").status_code == 429
    assert "_auth_user_id" not in client.session
    assert sign_in(client, "ada", "correct-horse-battery", ip="203.0.113.8").status_code == 302


def test_an_ipv6_client_is_counted_per_64_network(client, limits, ada):
    for n in range(5):
        assert failed(sign_in(client, f"name-{n}", "wrong", ip=f"2001:db8:1:2::{n + 1}"))
    assert sign_in(client, "name-9", "wrong", ip="2001:db8:1:2::ffff").status_code == 429


def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(client, limits, ada, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    for n in range(5):
        sign_in(client, f"name-{n}", "wrong", ip="10.0.0.1", HTTP_X_FORWARDED_FOR=f"203.0.113.5:{4000 + n}")
    assert sign_in(client, "name-9", "wrong", ip="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.5").status_code == 429
    assert failed(sign_in(client, "name-9", "wrong", ip="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.6"))


def test_a_correct_sign_in_under_the_limits_works(client, limits, ada):
    assert failed(sign_in(client, "ada", "wrong"))
    assert failed(sign_in(client, "ada", "also-wrong"))
    response = sign_in(client, "ada", "correct-horse-battery")
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert client.session["_auth_user_id"] == str(ada.pk)
    assert client.get("/admin/").status_code == 200


def test_showing_the_sign_in_page_is_not_an_attempt(client, limits, ada):
    for _ in range(10):
        assert client.get(LOGIN, REMOTE_ADDR="198.51.100.1").status_code == 200
    assert sign_in(client, "ada", "correct-horse-battery").status_code == 302
