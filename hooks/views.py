"""Webhook and web service URLs through Django (SPEC 4.2, 7.2, 7.3): parse, ask hooks/answers.py, respond.

The hooks process answers webhooks on its event loop by the same rules
(hooks/asgi.py); this view answers them where Django serves the hooks host.
"""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from config.length_required import reads_chunked_bodies
from hooks import answers, bodies, intake, maintenance, selectors, services, webservice
from hooks.exceptions import BodyError, WebServiceError, WebServiceInMaintenance
from hooks.incoming import read_body, with_body


@reads_chunked_bodies
@csrf_exempt
def receive(request: HttpRequest, key: str = "") -> HttpResponse:
    """A webhook; a key of "" (a malformed one) is a miss like any other."""
    return _response(_receive(request, key))


def _receive(request: HttpRequest, key: str) -> answers.Reply:
    if maintenance.active():
        return answers.MAINTENANCE
    method, meta = request.method, request.META
    if method not in answers.HOOK_METHODS:
        return answers.WRONG_METHOD
    fresh = answers.fresh_lookup(method, bodies.declared_length(meta))
    automation_id = selectors.automation_id_for_hook_key(key, fresh=fresh)
    if automation_id is None:
        return answers.MISS
    if not answers.reads_body(method):
        return answers.without_body(method, meta.get("HTTP_ACCESS_CONTROL_REQUEST_HEADERS"))
    try:
        body = read_body(meta)
    except BodyError as refused:  # nothing is stored; a client that left never reads the answer
        return answers.Reply(refused.status_code)
    if handshake := answers.handshake(meta.get("HTTP_X_HOOK_SECRET"), body):
        return handshake
    try:
        delivery = services.accept_delivery(automation_id=automation_id, incoming=with_body(request, body))
    except intake.AutomationGone:
        selectors.forget_hook_key(key)
        return answers.MISS
    return answers.accepted(delivery.public_id)


@reads_chunked_bodies
@csrf_exempt
def web_service(request: HttpRequest, key: str = "") -> HttpResponse:
    requested = request.headers.get("Access-Control-Request-Headers")
    try:
        if maintenance.active():
            raise WebServiceInMaintenance()
        if request.method == "OPTIONS":  # a preflight: no run, no quota
            reply = answers.Reply(204)
        else:
            automation = webservice.find(key)
            answer = webservice.call(automation, with_body(request, read_body(request.META)))
            reply = answers.Reply(answer.status, tuple(answer.headers.items()), answer.body, answer.content_type)
    except (WebServiceError, BodyError) as error:  # nothing ran, or nothing counted
        headers = error.headers if isinstance(error, WebServiceError) else ()
        reply = answers.Reply(error.status_code, headers, error.detail.encode(), "text/plain")
    cors = answers.cors(request.method, requested, answers.WEB_SERVICE_METHODS)
    if reply.headers:  # a browser script may read what a respond step set, and Retry-After
        cors += (("Access-Control-Expose-Headers", ", ".join(name for name, _ in reply.headers)),)
    return _response(reply, cors)


def _response(reply: answers.Reply, extra: tuple = ()) -> HttpResponse:
    response = HttpResponse(reply.body, status=reply.status, content_type=reply.content_type)
    if reply.content_type is None:
        del response["Content-Type"]
    for name, value in reply.headers + extra:
        response[name] = value
    return response
