"""Your connections (/account/connections): the list, connecting an app, one connection, and its changes.

Each view parses, calls one rule (accounts/connected.py, connections/services.py) and answers; a change is a POST
with CSRF that redirects back, its outcome shown once as a message. A pasted key is a sensitive POST parameter
(left out of error reports) and is never rendered back.
"""

import re
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts import connected
from accounts.connection_forms import ConnectForm, CredentialForm, LabelForm
from connections import auth_types, checking, oauth, services
from connections.models import Connection
from edge import page_headers
from hooks import endpoints

_ORIGIN = re.compile(r"https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?|https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


def _ending_at_sign_in(response: HttpResponse, app) -> HttpResponse:
    """The page's policy with its forms also allowed to end at the app's sign-in page: browsers apply form-action to
    where a form's answer redirects, and the answer to connecting or reconnecting an oauth_v2 app redirects there."""
    client = oauth.client_of(app)
    if client is not None:
        parts = urlsplit(client.authorize_url)
        origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        if _ORIGIN.fullmatch(origin):
            response["Content-Security-Policy"] = page_headers.policy(form_action=[origin])
    return response


def _own(request: HttpRequest, connection_id: int) -> Connection:
    connection = connected.connection_of(request.user, connection_id)
    if connection is None:
        raise Http404("no such connection")
    return connection


@require_safe
@never_cache
@login_required
def connection_list(request: HttpRequest) -> HttpResponse:
    """Every connection of the signed-in owner: its app, name, state, key hint and the automations using it."""
    using = connected.usage_of(request.user)
    rows = [(connection, using.get(connection.pk, [])) for connection in connected.connections_of(request.user)]
    return render(request, "accounts/connections.html", {"rows": rows})


@sensitive_post_parameters("credential")
@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
@login_required
def connect(request: HttpRequest) -> HttpResponse:
    """GET without ?app=: choose an app. With it: the form its auth_type asks for. POST: connect, or say why not."""
    slug = (request.POST if request.method == "POST" else request.GET).get("app", "")
    app = connected.connectable_app(slug) if slug else None
    if app is None:
        query = request.GET.get("q", "")[:100]
        context = {"apps": connected.apps_to_connect(query), "query": query, "unknown": slug}
        return render(request, "accounts/connect_choose.html", context, status=404 if slug else 200)
    kind = auth_types.of(app.auth_type)
    form_options = {"takes_credential": kind.takes_credential, "field_label": kind.field_label}
    context = {"app": app, "kind": kind, "signs_in_ready": kind.signs_in and oauth.client_of(app) is not None}
    if request.method != "POST":
        form = ConnectForm(initial={"label": app.name}, **form_options)
        response = render(request, "accounts/connect.html", {**context, "form": form})
        return _ending_at_sign_in(response, app) if kind.signs_in else response
    form = ConnectForm(request.POST, **form_options)
    if form.is_valid() and kind.signs_in:
        try:
            return redirect(
                oauth.begin(request.session, owner_id=request.user.pk, app=app, label=form.cleaned_data["label"])
            )
        except oauth.Failed as failed:
            form.add_error(None, str(failed))
    elif form.is_valid():
        data = form.cleaned_data
        try:
            connection = services.connect(
                owner=request.user, app=app, label=data["label"], credential=data.get("credential", "")
            )
        except checking.Refused as refused:
            form.add_error("credential" if kind.takes_credential else None, str(refused))
        except services.NotConnectable as refusal:
            form.add_error(None, str(refusal))
        else:
            messages.success(
                request, _("%(app)s is connected as “%(label)s”.") % {"app": app.name, "label": connection.label}
            )
            return redirect("account-connection", connection_id=connection.pk)
    response = render(request, "accounts/connect.html", {**context, "form": form}, status=400)
    return _ending_at_sign_in(response, app) if kind.signs_in else response


@require_safe
@never_cache
@login_required
def oauth_callback(request: HttpRequest) -> HttpResponse:
    """Where an app's sign-in page sends the owner back: the state checked against this session, the code exchanged
    for tokens (connections/oauth.py). Anything wrong is a page that says what, and nothing is made or changed."""
    try:
        connection, again = oauth.finish(request.session, owner=request.user, params=request.GET)
    except oauth.Failed as failed:
        return render(request, "accounts/connect_failed.html", {"reason": str(failed)}, status=400)
    names = {"app": connection.app.name, "label": connection.label}
    if again:
        messages.success(request, _("Reconnected: %(app)s gave new access to “%(label)s”.") % names)
    else:
        messages.success(request, _("%(app)s is connected as “%(label)s”.") % names)
    return redirect("account-connection", connection_id=connection.pk)


def _connection_page(request, connection: Connection, *, label_form=None, credential_form=None, status=200):
    kind = auth_types.of(connection.app.auth_type)
    context = {
        "connection": connection,
        "kind": kind,
        "signs_in_ready": kind.signs_in and oauth.client_of(connection.app) is not None,
        "using": connected.automations_using(connection),
        "hook_url": endpoints.connection_url(connection),
        "label_form": label_form or LabelForm(initial={"label": connection.label}, prefix="rename"),
        "credential_form": credential_form or CredentialForm(prefix="reconnect", field_label=kind.field_label),
    }
    response = render(request, "accounts/connection.html", context, status=status)
    return _ending_at_sign_in(response, connection.app) if kind.signs_in else response


@require_safe
@never_cache
@login_required
def connection_page(request: HttpRequest, connection_id: int) -> HttpResponse:
    return _connection_page(request, _own(request, connection_id))


@require_POST
@login_required
def rename(request: HttpRequest, connection_id: int) -> HttpResponse:
    connection = _own(request, connection_id)
    form = LabelForm(request.POST, prefix="rename")
    if not form.is_valid():
        return _connection_page(request, connection, label_form=form, status=400)
    services.rename(connection=connection, label=form.cleaned_data["label"])
    messages.success(request, _("Renamed."))
    return redirect("account-connection", connection_id=connection.pk)


@sensitive_post_parameters("reconnect-credential")
@require_POST
@login_required
def reconnect(request: HttpRequest, connection_id: int) -> HttpResponse:
    """A new key, checked by the app's test call as when connecting; refused, the saved one stays. An app that signs
    in: its sign-in page again, for this connection."""
    connection = _own(request, connection_id)
    kind = auth_types.of(connection.app.auth_type)
    if kind.signs_in:
        try:
            url = oauth.begin(
                request.session,
                owner_id=request.user.pk,
                app=connection.app,
                label=connection.label,
                connection_id=connection.pk,
            )
        except oauth.Failed as failed:
            messages.error(request, str(failed))
            return redirect("account-connection", connection_id=connection.pk)
        return redirect(url)
    if not kind.takes_credential:
        messages.info(request, _("This connection has no key to replace."))
        return redirect("account-connection", connection_id=connection.pk)
    form = CredentialForm(request.POST, prefix="reconnect", field_label=kind.field_label)
    if form.is_valid():
        try:
            services.reconnect(connection=connection, credential=form.cleaned_data["credential"])
        except checking.Refused as refused:
            form.add_error("credential", str(refused))
        else:
            messages.success(request, _("Reconnected: the new key is saved."))
            return redirect("account-connection", connection_id=connection.pk)
    return _connection_page(request, connection, credential_form=form, status=400)


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def delete(request: HttpRequest, connection_id: int) -> HttpResponse:
    """GET: what deleting does. POST: delete, refused while an automation that is on uses it unless turn_off asks
    that those be turned off first."""
    connection = _own(request, connection_id)
    if request.method != "POST":
        using = connected.automations_using(connection)
        blocking = [automation for automation in using if automation.enabled]
        context = {"connection": connection, "using": using, "blocking": blocking}
        return render(request, "accounts/connection_delete.html", context)
    outcome = connected.delete(connection=connection, turn_off=request.POST.get("turn_off") == "1")
    if not outcome.deleted:
        names = ", ".join(f"“{automation.name}”" for automation in outcome.blocking)
        said = _("Not deleted: %(names)s use it and are on. Turn them off first, or choose to turn them off here.") % {
            "names": names
        }
        if outcome.turned_off:  # turned off, then another was turned on meanwhile: the owner learns both
            turned_off = ", ".join(f"“{automation.name}”" for automation in outcome.turned_off)
            said += " " + _("Turned off first: %(names)s.") % {"names": turned_off}
        messages.error(request, said)
        return redirect("account-connection-delete", connection_id=connection.pk)
    said = _("“%(label)s” is deleted.") % {"label": connection.label}
    if outcome.turned_off:
        names = ", ".join(f"“{automation.name}”" for automation in outcome.turned_off)
        said += " " + _("Turned off first: %(names)s.") % {"names": names}
    if outcome.left_naming:
        said += " " + _("Automations that named it fail at that step until you choose another connection.")
    messages.success(request, said)
    return redirect("account-connections")
