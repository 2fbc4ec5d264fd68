"""/form/run/{key}/state: where a session page's run is, for the page's script (static/session.js).

The busy page refreshes itself every SESSION_REFRESH_SECONDS without
JavaScript; with it, the page asks this small answer more often and reloads
as soon as the run shows a form, ends or fails. A key that follows no run
(or an ended one) gets 404, as the page shows the unavailable page.
"""

from django.views.decorators.cache import never_cache
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from interfaces.forms import selectors


class SessionStateAPI(APIView):
    authentication_classes: list = []
    permission_classes: list = []
    renderer_classes = [JSONRenderer]
    http_method_names = ["get", "head"]

    @classmethod
    def as_view(cls, **initkwargs):
        return never_cache(super().as_view(**initkwargs))

    def get(self, request, key: str):
        run = selectors.session_run(key, white_label_owner_id=getattr(request, "white_label_owner_id", None))
        if run is None:
            raise NotFound("not found")
        return Response({"state": selectors.session_state(run)})
