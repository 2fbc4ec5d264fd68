"""Views shared by every host."""
from django.http import HttpResponse


def health(request):
    """Liveness for load balancers: the process answers; touches no database."""
    return HttpResponse("ok", content_type="text/plain")
