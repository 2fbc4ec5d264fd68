"""A NUL in an admin page's query string gets 400, not a 500 from the database.

Admin turns query parameters into queries (list filters, search, the date
hierarchy), and PostgreSQL refuses a NUL in any text it is sent: `?status=%00`
was a 500. No value a staff member means holds one.
"""

from django.http import HttpResponseBadRequest


class AdminNulQueryMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/admin/") and any(
            "\x00" in name or "\x00" in value for name, values in request.GET.lists() for value in values
        ):
            return HttpResponseBadRequest("A query parameter holds a NUL character.", content_type="text/plain")
        return self.get_response(request)
