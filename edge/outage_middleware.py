"""The web process's side of edge/outages.py: a view that found the database out of reach answers 503."""

from django.db import connection
from django.http import HttpResponse

from edge.outages import RETRY_AFTER_SECONDS, outage

UNAVAILABLE_TEXT = "The service is briefly unavailable. Please try again in a few seconds.\n"


class DatabaseOutageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code < 500 and connection.connection is not None:
            outage.answered()  # this thread reached the database for this request
        return response

    def process_exception(self, request, exception):
        if not outage.is_outage(exception):
            return None  # Django's 500, with its traceback in the log
        outage.refused_one(exception)
        response = HttpResponse(UNAVAILABLE_TEXT, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        response["Cache-Control"] = "no-store"
        return response
