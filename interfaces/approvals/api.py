"""The approval queue's JSON endpoint, for deciding by script: /moderation/api?queue={key}.

It authenticates the way the page does, with the queue's key (the approval
link's own query string): no account, no session, so no CSRF token either;
a page of another site cannot read the key it would need. Errors have one
shape, {"error": "..."}.
"""

from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from edge import limits
from edge.errors import Refused, TooManyRequests
from edge.json_bodies import JSONBodyParser
from interfaces.approvals import queues
from interfaces.approvals.queues import ApprovalItem, Outcome
from interfaces.approvals.views import OUTCOME_STATUS, client_ip
from interfaces.typed_text import has_control_characters

OUTCOME_ERRORS = {
    Outcome.ALREADY_DECIDED: "already decided",
    Outcome.CLOSED: "no longer open: it expired or its run ended",
    Outcome.NOT_FOUND: "no such item in this queue",
}


# A decision's body: an item id, a decision and a comment of at most queues.COMMENT_LIMIT characters.
MAX_BODY_BYTES = 64 * 1024


class DecisionParser(JSONBodyParser):
    """A decision's JSON body: a few hundred bytes, refused past MAX_BODY_BYTES."""

    def max_bytes(self) -> int:
        return MAX_BODY_BYTES


class DecisionSerializer(serializers.Serializer):
    item = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    decision = serializers.ChoiceField(choices=ApprovalItem.Decision.values)
    comment = serializers.CharField(required=False, allow_blank=True, max_length=queues.COMMENT_LIMIT, default="")

    def validate_comment(self, value: str) -> str:
        if has_control_characters(value):
            raise serializers.ValidationError("control characters are not allowed")
        return value


class ModerationAPI(APIView):
    """GET: the queue's pending items. POST {"item", "decision": "approved"|"rejected", "comment"}: decide one."""

    authentication_classes: list = []
    permission_classes: list = []
    parser_classes = [DecisionParser]
    renderer_classes = [JSONRenderer]

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        self.headers = {**self.headers, "Cache-Control": "no-store"}  # DRF's Allow and Vary kept

    def _queue(self, request):
        if wait := limits.retry_after(request, "approvals"):
            raise TooManyRequests(wait)
        queue = queues.queue_for_key(request.query_params.get("queue", ""))
        if queue is None:
            raise NotFound("not found")
        return queue

    def get(self, request):
        queue = self._queue(request)
        pending, _ = queues.items_of(queue)
        return Response({"pending": [item.as_json() for item in pending]})

    def post(self, request):
        queue = self._queue(request)
        serializer = DecisionSerializer(data=request.data)
        if not serializer.is_valid():
            raise Refused(400, "invalid decision", fields=serializer.errors)
        data = serializer.validated_data
        outcome = queues.decide(
            queue=queue,
            item_id=data["item"],
            decision=data["decision"],
            comment=data["comment"],
            address=client_ip(request),
        )
        item = queues.item_view(queue, data["item"])
        body = {"item": item.as_json()} if item else {}
        if outcome is not Outcome.DECIDED:
            raise Refused(OUTCOME_STATUS[outcome], OUTCOME_ERRORS[outcome], **body)
        return Response(body, status=OUTCOME_STATUS[outcome])
