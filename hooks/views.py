"""Views of the webhook and web service URLs (SPEC 4.2, 7.2, 7.3): parse, call one function, respond."""
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from automations.exceptions import WebServiceError
from hooks import maintenance, receiver, webservice
from hooks.exceptions import BodyError
from hooks.incoming import incoming


def _response(reply: receiver.Reply) -> HttpResponse:
    response = HttpResponse(reply.body, status=reply.status, content_type=reply.content_type)
    if reply.content_type is None:
        del response["Content-Type"]
    for name, value in reply.headers:
        response[name] = value
    return response


def _cors(response: HttpResponse, request: HttpRequest, methods: str) -> HttpResponse:
    response["Access-Control-Allow-Origin"] = "*"
    if request.method == "OPTIONS":
        response["Access-Control-Allow-Methods"] = methods
        if wanted := request.headers.get("Access-Control-Request-Headers"):
            response["Access-Control-Allow-Headers"] = wanted[:1000]
        response["Access-Control-Max-Age"] = "86400"
    return response


@csrf_exempt
def receive(request: HttpRequest, key: str = "") -> HttpResponse:
    """Webhook URLs reached through Django; gunicorn's requests are answered by hooks/wsgi.py, with the same reply."""
    return _response(receiver.receive(request.META, key))


@csrf_exempt
def web_service(request: HttpRequest, key: str) -> HttpResponse:
    if maintenance.active():
        return _cors(HttpResponse("web service is in maintenance", status=503, content_type="text/plain"), request, "*")
    if request.method == "OPTIONS":  # a preflight: no run, no quota
        return _cors(HttpResponse(status=204), request, "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS")
    try:
        answer = webservice.call(key=key, incoming=incoming(request))
    except WebServiceError as error:
        return _cors(HttpResponse(error.message, status=error.status_code, content_type="text/plain"), request, "")
    except BodyError as refused:  # nothing ran and nothing counted
        return _cors(HttpResponse(refused.detail, status=refused.status_code, content_type="text/plain"), request, "")
    response = HttpResponse(answer.body, status=answer.status, content_type=answer.content_type)
    for name, value in answer.headers.items():
        response[name] = value
    return _cors(response, request, "")


@csrf_exempt
def web_service_miss(request: HttpRequest) -> HttpResponse:
    return web_service(request, "")
