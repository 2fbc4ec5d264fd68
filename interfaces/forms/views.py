"""Form pages: hosted forms (/form/{key}), form session pages (/form/run/{key}), one-time forms (/form/s/{key}).

A white-label domain serves the first two, for its own account's forms only.

Each page looks its key up first and answers a miss with the one
unavailable page. A POST is counted against the form's limits before its
body is read, and its files are limited while they stream: those views are
csrf_exempt only so that the upload handler is in place before the CSRF
check reads the body; csrf_protect then checks it (Django's documented way).
Every redirect is a relative URL, so that the pages work behind a proxy that
serves them under another host or path.
"""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.translation import get_language
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods

from automations.models import Run
from edge import limits, page_headers, process_cache
from interfaces.forms import blank_pages, selectors, services, spam, submissions, uploads
from interfaces.forms.fields import FieldForm, prefill_from
from interfaces.models import FormFile
from interfaces.pages import see_other, unavailable
from publickeys.models import PublicKey
from publickeys.selectors import key_of

LOGIN_URL = "/login"
# A hosted form's blank fields, rendered once per process, language and version of the automation: rendering
# fields costs most of a form's GET (benchmarks/RESULTS.md). Only what every visitor sees alike is kept.
_blank_fields = process_cache.named("blank-form-fields", max_size=1000, seconds=300)
SESSION_REFRESH_SECONDS = 2
SESSION_WAITING_REFRESH_SECONDS = 30
# A page sent again while its first POST is still being started: usually done within a second; at worst the first
# POST died and its claim runs out (submissions.PENDING_SECONDS), after which sending the page again starts its run.
SENDING_RETRY_SECONDS = 5


@page_headers.never_cache  # Django's, cheaper: this is the page opened most
@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def hosted_form(request, key: str):
    automation = selectors.form_automation(key, fresh=request.method == "POST")
    white_label_owner = getattr(request, "white_label_owner_id", None)
    if automation is None or white_label_owner not in (None, automation.owner_id):
        return unavailable(request, "form")  # on a white-label domain, another account's key is as one never issued
    trigger = automation.definition["trigger"]
    if trigger.get("require_sign_in") and white_label_owner is not None:
        # Sign-in lives on BASE_URL, whose session cookie a white-label domain never sees: such a form is served
        # there (services.form_url issues it there too).
        return HttpResponseRedirect(settings.BASE_URL + request.get_full_path())
    if trigger.get("require_sign_in") and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path(), LOGIN_URL)
    if not automation.enabled:
        return render(request, "interfaces/form_closed.html", {"title": trigger.get("title", "")}, status=503)
    scope = f"form-{automation.pk}"
    if request.method != "POST":
        if not request.GET:  # the blank form is the same for every visitor: rendered once per process
            return _form_page(request, trigger, None, scope, blank=(automation.pk, automation.updated_at))
        prefill = prefill_from(request.META.get("QUERY_STRING", ""))
        return _form_page(request, trigger, FieldForm(trigger["fields"], prefill=prefill), scope)
    if wait := limits.retry_after(request, "form submission", scope=str(automation.pk), own=trigger.get("limits")):
        return _too_many(request, wait)
    handler = uploads.LimitedUploadHandler(request, uploads.limits_of(trigger["fields"]))
    if refused := _body_refused(request, handler):
        return refused
    request.upload_handlers = [handler]
    return csrf_protect(_submit_hosted)(request, automation, handler, scope)


def _submit_hosted(request, automation, handler, scope):
    trigger = automation.definition["trigger"]
    if spam.is_honeypot_hit(request.POST):
        return render(request, "interfaces/form_refused.html", status=400)
    form = FieldForm(trigger["fields"], request.POST, request.FILES)
    # Shown again after a mistake, the page keeps the time it was first shown at: fixing it restarts no clock.
    shown = spam.valid_shown(request.POST, scope)
    if not _valid(form, handler):
        return _form_page(request, trigger, form, scope, status=400, shown=shown)
    if spam.filled_too_fast(request.POST, scope):
        return _form_page(request, trigger, form, scope, status=400, too_fast=True, shown=shown)
    page = request.POST[spam.SHOWN]  # a valid shown time, unique to the page the visitor was given
    if (claim := submissions.claim(page)) is None:
        return _sent_already(request, page)
    try:
        run, session_key = services.submit_form(automation=automation, form=form, user=request.user)
    except BaseException:  # submit_form commits all or nothing: no run started
        submissions.release(page, claim)
        raise
    submissions.started(page, run.pk)
    return _to_session(request, session_key)


def _to_session(request, session_key: str):
    # On the host the form was sent on, a white-label domain included: its visitor never leaves the account's name.
    return see_other(f"run/{session_key}")  # /form/{key} -> /form/run/{session key}


def _sent_already(request, page: str):
    """A page sent a second time (a double click, a resend): to the first one's session page, starting nothing."""
    run_id = submissions.first_run_id(page)
    session_key = key_of(purpose=PublicKey.Purpose.FORM_SESSION, target=Run(pk=run_id)) if run_id else None
    if session_key is None:  # the first is still being started, or died before its run was committed
        response = render(request, "interfaces/form_sending.html", status=409)
        response["Retry-After"] = str(SENDING_RETRY_SECONDS)
        return response
    return _to_session(request, session_key)


@never_cache
@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def session_page(request, key: str):
    run = selectors.session_run(key, white_label_owner_id=getattr(request, "white_label_owner_id", None))
    if run is None:
        return unavailable(request, "form session")
    waiting_for = selectors.waiting_form(run, to="session")
    if request.method == "POST":
        if waiting_for is None:
            return see_other(key)  # nothing to answer now: show where the run is
        if wait := limits.retry_after(request, "form submission", scope=f"session-{run.automation_id}"):
            return _too_many(request, wait)
        handler = uploads.LimitedUploadHandler(request, uploads.limits_of(waiting_for["form"]["fields"]))
        if refused := _body_refused(request, handler):
            return refused
        request.upload_handlers = [handler]
        return csrf_protect(_submit_session)(request, key, run, waiting_for, handler)
    if waiting_for is not None:
        return _form_page(
            request, waiting_for["form"], FieldForm(waiting_for["form"]["fields"]), None, step=waiting_for
        )
    return _session_state(request, run)


def _submit_session(request, key, run, waiting_for, handler):
    if request.POST.get("fg-step") != waiting_for["step"]:
        return see_other(key)  # a form of an earlier step, sent from an old tab: show where the run is now
    form = FieldForm(waiting_for["form"]["fields"], request.POST, request.FILES)
    if not _valid(form, handler):
        return _form_page(request, waiting_for["form"], form, None, status=400, step=waiting_for)
    services.answer_session_form(run=run, step=waiting_for["step"], form=form)
    return see_other(key)  # answered now or by another tab first: either way the page shows what comes next


def _session_state(request, run: Run):
    if run.status in (Run.Status.SUCCEEDED, Run.Status.STOPPED):
        completion = (run.definition or {}).get("trigger", {}).get("completion", {})
        if completion.get("redirect"):
            return see_other(completion["redirect"])
        return render(request, "interfaces/form_done.html", {"message": completion.get("message", "")})
    if run.status in (Run.Status.FAILED, Run.Status.ABANDONED):
        return render(request, "interfaces/form_failed.html")
    state = selectors.session_state(run)  # busy, or waiting for someone else: asked again far less often
    refresh = SESSION_REFRESH_SECONDS if state == "busy" else SESSION_WAITING_REFRESH_SECONDS
    return render(request, "interfaces/form_busy.html", {"refresh": refresh, "state": state})


@never_cache
@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def one_time_form(request, key: str):
    run = selectors.one_time_run(key)
    if run is None:
        return unavailable(request)
    waiting_for = run.waiting_for
    if request.method != "POST":  # GET and HEAD show the form and never use the link up
        return _form_page(request, waiting_for["form"], FieldForm(waiting_for["form"]["fields"]), None)
    if wait := limits.retry_after(request, "form submission", scope=f"one-time-{run.automation_id}"):
        return _too_many(request, wait)
    handler = uploads.LimitedUploadHandler(request, uploads.limits_of(waiting_for["form"]["fields"]))
    if refused := _body_refused(request, handler):
        return refused
    request.upload_handlers = [handler]
    return csrf_protect(_submit_one_time)(request, run, handler)


def _submit_one_time(request, run, handler):
    waiting_for = run.waiting_for
    form = FieldForm(waiting_for["form"]["fields"], request.POST, request.FILES)
    if not _valid(form, handler):
        return _form_page(request, waiting_for["form"], form, None, status=400)
    if not services.answer_one_time_form(run=run, form=form):
        return unavailable(request)
    return render(request, "interfaces/form_done.html", {"message": ""})


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "HEAD"])
def form_file(request, file_id):
    """A file sent with a form, for its automation's owner only: anyone else gets 404, as for no file."""
    found = FormFile.objects.filter(pk=file_id, automation__owner=request.user).first()
    if found is None:
        raise Http404()
    response = FileResponse(default_storage.open(found.path), as_attachment=True, filename=found.name)
    response["Content-Type"] = "application/octet-stream"  # never rendered by the browser as a page of this site
    return response


def _valid(form: FieldForm, handler) -> bool:
    valid = form.is_valid()
    for field, message in handler.refused.items():
        if field in form.fields and field in form.visible:
            form.add_error(field, message)
            valid = False
    return valid


def _form_page(
    request,
    settings: dict,
    form: FieldForm | None,
    scope,
    *,
    status=200,
    too_fast=False,
    step=None,
    blank=None,
    shown: str | None = None,
):
    """The form's page. blank: the automation's version, under which its blank form is remembered (form is None).
    shown: the time it was first shown at (spam.valid_shown), for a page shown again; a new one otherwise."""
    fields = None
    if blank is not None:
        fields = _blank_fields.get((*blank, get_language()))
        if fields is None:
            fields = FieldForm(settings["fields"]).render()
            _blank_fields.set((*blank, get_language()), fields)
    context = {
        "title": settings.get("title", ""),
        "description": settings.get("description", ""),
        "submit_label": settings.get("submit_label", ""),
        "form": form,
        "fields": fields if fields is not None else form.render(),
        "honeypot": spam.HONEYPOT if scope else None,
        "shown": (shown or spam.shown_token(scope)) if scope else None,
        "shown_name": spam.SHOWN,
        "proof_name": spam.PROOF,
        "too_fast": too_fast,
        "step": step["step"] if step else None,
    }
    if blank is not None and not request.user.is_authenticated:
        return HttpResponse(blank_pages.render(request, blank, context, context["shown"]), status=status)
    return render(request, "interfaces/form_page.html", context, status=status)


def _body_refused(request, handler) -> HttpResponse | None:
    """A body larger than every file of the form and its other answers together may be is refused before a byte of
    it is read (413), and so is one of no declared length (411): the upload handler counts only the files it
    keeps, and the parts it refuses would otherwise be read to their end, however long."""
    length = request.META.get("CONTENT_LENGTH") or ""
    if not length.isdigit():
        return render(request, "interfaces/form_too_large.html", status=411)
    if int(length) > handler.cap + settings.DATA_UPLOAD_MAX_MEMORY_SIZE + uploads.FORM_OVERHEAD_BYTES:
        return render(request, "interfaces/form_too_large.html", status=413)
    return None


def _too_many(request, retry_after: int):
    response = render(request, "interfaces/form_too_many.html", status=429)
    response["Retry-After"] = str(retry_after)
    return response
