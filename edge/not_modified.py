"""A 304 goes out without Content-Length, as nginx and Django's own conditional answers send it.

RFC 9110 8.6 allows a 304 the 200's length, but clients that read it as the
length of a body to come (benchmark tools among them) then wait for bytes
that never come; Django's CommonMiddleware would write 0, which is wrong.
"""


class NoLengthOnNotModifiedMiddleware:
    """Listed just before CommonMiddleware: its answer is seen after CommonMiddleware has added a length."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code == 304:
            del response["Content-Length"]
        return response
