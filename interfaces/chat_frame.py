"""The widget frame's headers: who may frame it (Content-Security-Policy frame-ancestors), and no X-Frame-Options.

X-Frame-Options cannot name origins, so the frame goes without it and its
policy's frame-ancestors lists the widget's allowed origins (any http or
https page by default). The rest of the policy is every page's: scripts,
styles and connections from this site only, no inline script.

TODO(merge): once config/page_headers.py (framed_by) is in main, the widget
view is decorated with framed_by(...) and this module goes.
"""

from django.http import HttpResponse

from interfaces.chat import Widget

_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}"
)
# Any page of the web: '*' would also let data: and blob: documents frame it.
ANY_ORIGIN = "https: http:"


def frame_ancestors(widget: Widget) -> str:
    origins = widget.allowed_origins
    return ANY_ORIGIN if "*" in origins else " ".join(origins)


def allow_framing(response: HttpResponse, widget: Widget) -> HttpResponse:
    response["Content-Security-Policy"] = _POLICY.format(ancestors=frame_ancestors(widget))
    response.xframe_options_exempt = True  # read by Django's XFrameOptionsMiddleware
    return response
