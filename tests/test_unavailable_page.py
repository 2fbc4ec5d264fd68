from django.test import RequestFactory

from interfaces.pages import unavailable


def test_the_unavailable_page_says_the_form_is_not_available_and_is_never_cached():
    response = unavailable(RequestFactory().get("/form/s/anything"))
    assert response.status_code == 404
    assert b"This form is not available" in response.content
    assert b"may already have been submitted" in response.content
    assert "no-store" in response["Cache-Control"]
