"""A request body of no declared length (Transfer-Encoding: chunked) gets 411, except at views that read one.

Django and djangorestframework take a request without Content-Length for one
without a body: a chunked JSON message to the chat or the approval API was
read as empty and answered "text: This field is required". Webhook and web
service URLs read chunked bodies themselves, under their limit and deadline
(edge/bodies.py), and say so with reads_chunked_bodies; views that read
no body at all (the feed's) say so with reads_no_body.
"""

from django.http import HttpResponse, JsonResponse

from edge import bodies
from edge.errors import error_json


def reads_chunked_bodies(view):
    view.reads_chunked_bodies = True
    return view


def reads_no_body(view):
    """A view that never reads a body (the feed's): a chunked one does no harm there, so it gets no 411."""
    return reads_chunked_bodies(view)


class LengthRequiredMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if bodies.declared_length(request.META) is not None or getattr(view_func, "reads_chunked_bodies", False):
            return None
        return refusal(request)


MESSAGE = "send the request body with a Content-Length header"


def refusal(request) -> HttpResponse:
    """411 in the shape the endpoint answers errors in: OAuth's, {"error": ...} for JSON, else plain text."""
    if request.path.startswith("/oauth/"):
        return JsonResponse({"error": "invalid_request", "error_description": MESSAGE}, status=411)
    if request.content_type == "application/json":
        return error_json(411, MESSAGE)
    return HttpResponse(f"{MESSAGE}\n", status=411, content_type="text/plain; charset=utf-8")
