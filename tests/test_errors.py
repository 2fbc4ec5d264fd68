"""edge/errors.py: the one place that answers the JSON endpoints' errors, in one shape."""

import pytest
from rest_framework.views import APIView

from edge import errors
from interfaces.approvals.api import ModerationAPI
from interfaces.chat.views import MessagesView
from interfaces.forms.session_api import SessionStateAPI


@pytest.mark.parametrize("view", [ModerationAPI, MessagesView, SessionStateAPI])
def test_every_api_view_answers_its_errors_through_the_one_handler(view):
    assert "get_exception_handler" not in vars(view)
    assert view().get_exception_handler() is errors.exception_handler
    assert APIView().get_exception_handler() is errors.exception_handler


def test_a_refusal_keeps_its_headers_in_the_one_shape(rf):
    from django.http import Http404

    waited = errors.exception_handler(errors.TooManyRequests(7, "slow down"), {})
    assert (waited.status_code, waited.data, waited["Retry-After"]) == (429, {"error": "slow down"}, "7")
    missing = errors.exception_handler(Http404(), {})
    assert (missing.status_code, set(missing.data)) == (404, {"error"})


def test_a_plain_view_answers_the_same_shape():
    answer = errors.error_json(503, "down for a moment", retry=True)
    assert (answer.status_code, answer.content) == (503, b'{"error": "down for a moment", "retry": true}')
