"""The chat widget's views: its page (the frame), the embed script, and the JSON endpoint of its messages."""

import hashlib

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe
from rest_framework import exceptions, serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from edge import limits
from edge.errors import TooManyRequests
from edge.json_bodies import JSONBodyParser
from edge.page_headers import framed_by
from interfaces.chat import conversations, tokens
from interfaces.pages import gone_context
from interfaces.typed_text import has_control_characters


class ChatUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "this chat is not available right now"


class MessageParser(JSONBodyParser):
    """A chat message's JSON body, at most CHAT_MAX_BODY_BYTES, read no further than that."""

    def max_bytes(self) -> int:
        return settings.CHAT_MAX_BODY_BYTES


class TextField(serializers.CharField):
    """Text only: DRF's CharField would take 5 for "5". It refuses NUL and lone surrogates and trims whitespace."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class MessageIn(serializers.Serializer):
    text = TextField()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["text"] = TextField(max_length=settings.CHAT_MESSAGE_MAX_CHARS)  # read at call time

    def validate_text(self, value: str) -> str:
        if has_control_characters(value):
            raise serializers.ValidationError("control characters are not allowed")
        return value


class PollIn(serializers.Serializer):
    after = serializers.IntegerField(min_value=0, max_value=2**63 - 1, default=0)


def _widget_or_404(request, key: str) -> conversations.Widget:
    """The widget, or 404; on a white-label domain, another account's widget is as one never issued."""
    widget = conversations.widget_for_key(key)
    if widget is None or not _served_here(request, widget.automation.owner_id):
        raise Http404()
    return widget


def _served_here(request, owner_id: int) -> bool:
    white_label_owner = getattr(request, "white_label_owner_id", None)
    return white_label_owner in (None, owner_id)


def _frame_ancestors(request) -> list[str]:
    """The sites that may frame this widget page: its allowed origins (["*"]: any); none for a miss."""
    widget = getattr(request, "chat_widget", None)
    return widget.allowed_origins if widget is not None else []


def _store_name(key: str) -> str:
    """The name the frame keeps its token under: one per widget, not the key itself."""
    return "flowgate-chat-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@require_safe
@framed_by(_frame_ancestors)
def widget_page(request: HttpRequest, key: str) -> HttpResponse:
    """The widget (the frame embed.js opens, or a page of its own): a new conversation's token on each load.

    Past the per-address limit of page loads, a hit and a miss alike get the
    429 page (no token); for a hit it is framed as the widget is, so the
    visitor reads it in the site's frame.
    """
    wait = limits.retry_after(request, "chat page")
    widget = conversations.widget_for_key(key)
    if widget is not None and not _served_here(request, widget.automation.owner_id):
        widget = None
    request.chat_widget = widget  # for _frame_ancestors, once the page is rendered
    if wait is not None:
        response = render(request, "interfaces/chat_too_many.html", {"title": widget and widget.title}, status=429)
        response["Retry-After"] = str(wait)
    elif widget is None:  # in the chat's own words, as every kind of key that leads nowhere
        response = render(request, "interfaces/chat_gone.html", gone_context("chat"), status=404)
    elif not widget.automation.enabled:
        response = render(request, "interfaces/chat_unavailable.html", {"title": widget.title}, status=503)
    else:
        context = {
            "title": widget.title,
            "welcome": widget.welcome,
            "token": tokens.issue(automation_id=widget.automation.pk),
            "messages_url": reverse("chat_messages", args=[key]),
            "store": _store_name(key),
            # The sites the frame may trade its token with by postMessage (static/chat.js): its frame-ancestors.
            "frame_origins": " ".join(widget.allowed_origins),
            "max_chars": settings.CHAT_MESSAGE_MAX_CHARS,
        }
        response = render(request, "interfaces/chat.html", context)
    response["Cache-Control"] = "no-store"  # a token per load
    return response


@require_safe
def embed_script(request: HttpRequest) -> HttpResponse:
    """The script a site's page loads with one tag: a launcher button and the widget's frame."""
    key = request.GET.get("key", "")
    widget = _widget_or_404(request, key)
    available = widget.automation.enabled
    body = render(request, "interfaces/chat_embed.js", {"title": widget.title, "available": available}).content
    response = HttpResponse(body, content_type="text/javascript; charset=utf-8")
    # A paused chat's button says so until its owner turns it on again, and then it should invite at once.
    response["Cache-Control"] = "public, max-age=300" if available else "no-cache"
    patch_vary_headers(response, ("Accept-Language",))  # its labels are in the visitor's language
    return response


class MessagesView(APIView):
    """GET: the conversation's messages after ?after=<number>. POST {"text"}: the visitor says something.

    The conversation is the one the X-Chat-Token header's token names
    (interfaces/chat/tokens.py); no cookie is read or set, so no CSRF token
    is needed: a page elsewhere cannot send the header without a CORS
    preflight, which this endpoint never grants.
    """

    authentication_classes: list = []
    permission_classes: list = []
    parser_classes = [MessageParser]
    renderer_classes = [JSONRenderer]

    def _conversation(self, request, automation_id: int | None) -> tokens.Conversation:
        if automation_id is None:
            raise Http404()
        try:
            return tokens.read(request.headers.get(tokens.HEADER), automation_id=automation_id)
        except tokens.BadToken:
            raise exceptions.PermissionDenied("this conversation token is not valid for this chat") from None

    def get(self, request, key: str) -> Response:
        # A poll needs no more than the key's lookup: most find nothing new and read no other row (conversations.py).
        automation_id = conversations.automation_id_for_key(key)
        on_white_label = getattr(request, "white_label_owner_id", None) is not None
        if (
            automation_id is not None
            and on_white_label
            and not _served_here(request, conversations.owner_id_of(automation_id))
        ):
            automation_id = None
        conversation = self._conversation(request, automation_id)
        query = PollIn(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = conversations.messages_after(conversation=conversation, after=query.validated_data["after"])
        return _no_store(Response({"messages": found}))

    def post(self, request, key: str) -> Response:
        widget = conversations.widget_for_key(key)
        if widget is not None and not _served_here(request, widget.automation.owner_id):
            widget = None
        conversation = self._conversation(request, widget and widget.automation.pk)
        message = MessageIn(data=request.data)
        message.is_valid(raise_exception=True)
        wait = limits.retry_after(
            request,
            "chat message",
            own=widget.limits,
            conversation=conversation.public_id.hex,
            widget=str(widget.automation.pk),
        )
        if wait is not None:
            raise TooManyRequests(wait, "too many messages; try again later")
        try:
            sent = conversations.send(widget=widget, conversation=conversation, text=message.validated_data["text"])
        except conversations.ChatUnavailable:
            raise ChatUnavailable() from None
        except conversations.ChatGone:
            raise Http404() from None
        return _no_store(Response({"message": sent}, status=status.HTTP_201_CREATED))


def _no_store(response: Response) -> Response:
    response["Cache-Control"] = "no-store"
    return response


messages = MessagesView.as_view()
