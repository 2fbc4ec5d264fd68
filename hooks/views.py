"""Views of the webhook and web service URLs (SPEC 4.2, 7.2, 7.3): parse, call one function, respond."""
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from automations import selectors
from automations.exceptions import WebServiceError
from hooks import maintenance, services, webservice
from hooks.exceptions import BodyTooLarge
from hooks.intake import AutomationGone
from hooks.incoming import incoming

HOOK_METHODS = ("GET", "POST", "PUT", "HEAD", "OPTIONS")
DELIVERY_HEADER = "X-Flowgate-Delivery-Id"


def _cors(response: HttpResponse, request: HttpRequest, methods: str) -> HttpResponse:
    response["Access-Control-Allow-Origin"] = "*"
    if request.method == "OPTIONS":
        response["Access-Control-Allow-Methods"] = methods
        if wanted := request.headers.get("Access-Control-Request-Headers"):
            response["Access-Control-Allow-Headers"] = wanted[:1000]
        response["Access-Control-Max-Age"] = "86400"
    else:
        response["Access-Control-Expose-Headers"] = DELIVERY_HEADER
    return response


@csrf_exempt
def receive(request: HttpRequest, key: str) -> HttpResponse:
    if maintenance.active():
        return HttpResponse(status=503)
    if request.method not in HOOK_METHODS:
        response = HttpResponse(status=405)
        response["Allow"] = ", ".join(HOOK_METHODS)
        return response
    automation_id = selectors.automation_id_for_hook_key(key)
    if automation_id is None:
        return HttpResponse(status=404)
    if request.method in ("HEAD", "OPTIONS"):
        return _cors(HttpResponse(status=200), request, ", ".join(HOOK_METHODS))
    try:
        inbound = incoming(request)
    except BodyTooLarge:
        return HttpResponse(status=413)
    if handshake := services.handshake_response(request, inbound):
        return _cors(handshake, request, "")
    try:
        delivery = services.accept_delivery(automation_id=automation_id, incoming=inbound)
    except AutomationGone:  # deleted since its key was remembered
        selectors.forget_hook_key(key)
        return HttpResponse(status=404)
    response = HttpResponse(status=200)  # SPEC 4.2: 200 with an empty body, sent after the row is committed
    response[DELIVERY_HEADER] = str(delivery.public_id)
    return _cors(response, request, "")


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
    except BodyTooLarge:
        return _cors(HttpResponse("request body too large", status=413, content_type="text/plain"), request, "")
    response = HttpResponse(answer.body, status=answer.status, content_type=answer.content_type)
    for name, value in answer.headers.items():
        response[name] = value
    return _cors(response, request, "")


@csrf_exempt
def hook_miss(request: HttpRequest) -> HttpResponse:
    return receive(request, "")


@csrf_exempt
def web_service_miss(request: HttpRequest) -> HttpResponse:
    return web_service(request, "")
