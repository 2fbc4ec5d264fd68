"""Web service URLs through Django (SPEC 7.3): parse, ask hooks/webservice.py, respond.

Webhook URLs are answered by the hooks process's handler alone
(hooks/asgi.py); one that reaches Django gets webhook_elsewhere's 503.
"""

import logging

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from edge.bodies import BodyError
from edge.length_required import reads_chunked_bodies, reads_no_body
from edge.replies import Reply, response
from hooks import answers, maintenance, webservice
from hooks.exceptions import WebServiceError, WebServiceInMaintenance
from hooks.incoming import read_body, with_body

logger = logging.getLogger(__name__)
ELSEWHERE = b"webhook URLs are answered by the hooks process, not this one; try again later\n"


@csrf_exempt
@reads_no_body
def webhook_elsewhere(request: HttpRequest, key: str = "") -> HttpResponse:
    """A webhook that reached Django: its host is served by a process that does not answer webhooks.

    Webhooks are answered by the hooks process alone (config.asgi): a WSGI
    web process serving HOOKS_URL's host is a deployment mistake (check
    flowgate.W004 warns of it). Nothing is stored. 503 with Retry-After, not
    421 Misdirected Request, whose meaning is closer: many senders give up
    on any 4xx, and retry a 5xx until the mistake is mended; a 404 would
    tell them the key is wrong.
    """
    path = request.path.encode("unicode_escape").decode("ascii")  # as Django logs paths: no line breaks
    logger.warning("A webhook reached a process that does not answer webhooks: %s", path)
    return response(Reply(503, (("Retry-After", "60"),), ELSEWHERE, "text/plain"))


@reads_chunked_bodies
@csrf_exempt
def web_service(request: HttpRequest, key: str = "") -> HttpResponse:
    requested = request.headers.get("Access-Control-Request-Headers")
    try:
        if maintenance.active():
            raise WebServiceInMaintenance()
        if request.method == "OPTIONS":  # a preflight: no run, no quota
            reply = Reply(204)
        else:
            automation = webservice.find(key)
            reply = webservice.call(automation, with_body(request, read_body(request.META)), key=key)
    except (WebServiceError, BodyError) as error:  # nothing ran, or nothing counted
        headers = error.headers if isinstance(error, WebServiceError) else ()
        reply = Reply(error.status_code, headers, error.detail.encode(), "text/plain")
    cors = answers.cors(request.method, requested, answers.WEB_SERVICE_METHODS)
    exposed = [name for name, value in reply.headers if (name, value) not in webservice.SANDBOXED]
    if exposed:  # a browser script may read what a respond step set, and Retry-After
        cors += (("Access-Control-Expose-Headers", ", ".join(exposed)),)
    return response(reply.with_headers(*cors))
