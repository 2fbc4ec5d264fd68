"""Your automations (/account/): the list, one automation's page, and what its owner changes there.

Each view parses, calls one rule (accounts/owned.py, automations/services.py) and answers; a change is a POST with
CSRF that redirects back (so a reload repeats nothing), its outcome shown once as a message.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from accounts import owned
from automations import selectors, services, triggers
from automations.definition import InvalidDefinition
from automations.models import Automation
from automations.triggers import TriggerRefused
from interfaces import public_urls
from interfaces.templatetags.pages import pretty_json

# The largest definition document the pages take: 100 steps of generous settings fit many times over.
MAX_DOCUMENT_BYTES = 1_000_000


def _own(request: HttpRequest, automation_id: int) -> Automation:
    automation = owned.automation_of(request.user, automation_id)
    if automation is None:
        raise Http404("no such automation")
    return automation


@require_safe
@never_cache
@login_required
def automation_list(request: HttpRequest) -> HttpResponse:
    """Every automation of the signed-in owner: on or off, its trigger, its latest run and how it ended."""
    automations = list(owned.automations_of(request.user))
    return render(request, "accounts/automations.html", {"automations": automations})


@require_safe
@never_cache
@login_required
def automation_page(request: HttpRequest, automation_id: int) -> HttpResponse:
    automation = _own(request, automation_id)
    context = {
        "automation": automation,
        "trigger_type": triggers.of(automation).TYPE,
        "urls": public_urls.public_urls(automation),
        # The keys its trigger issues can be renewed here; the embed tag goes with the chat widget's key.
        "renewable": triggers.of(automation).URLS,
        "document": selectors.document_of(automation),
        "kept": owned.kept_deliveries(automation),
        "verification": owned.verification_of(automation),
        "app_trigger": _app_trigger(automation),
    }
    return render(request, "accounts/automation.html", context)


def _app_trigger(automation: Automation) -> dict | None:
    """What its owner needs of an app trigger: for a manual one, what to paste where in the other app (the
    operation's instructions, from the catalog); for a self-registering one, whether its webhook is registered."""
    from automations.triggers import app_trigger
    from catalog.models import Operation
    from connections.models import Registration

    settings = automation.definition.get("trigger") or {}
    if settings.get("type") != app_trigger.AppTrigger.TYPE:
        return None
    operation = app_trigger.operation_of(settings)
    if operation is None:
        return None
    found = {"app": operation.app.name, "trigger": operation.name, "mode": operation.delivery_mode}
    if operation.delivery_mode == Operation.DeliveryMode.MANUAL:
        found["instructions"] = operation.instructions
    elif operation.delivery_mode == Operation.DeliveryMode.SELF_REGISTERING:
        found["registered"] = Registration.objects.filter(
            automation=automation, state=Registration.State.ACTIVE
        ).exists()
    return found


@require_POST
@login_required
def switch(request: HttpRequest, automation_id: int) -> HttpResponse:
    """Turn on (replaying deliveries kept while off) or off, through the services admin uses."""
    automation = _own(request, automation_id)
    if request.POST.get("state") == "on":
        try:
            services.turn_on(automation=automation)
            messages.success(request, _("On. Deliveries kept while it was off are replayed in the order they came."))
        except TriggerRefused as refusal:
            messages.error(request, _("Left off: its trigger refused: %(reason)s") % {"reason": refusal})
    elif request.POST.get("state") == "off":
        services.turn_off(automation=automation)
        messages.success(request, _("Off. Webhooks are still accepted and kept until it is on again."))
    if request.POST.get("back") == "list":
        return redirect("account-automations")
    return redirect("account-automation", automation_id=automation.pk)


@require_POST
@login_required
def renew_url(request: HttpRequest, automation_id: int) -> HttpResponse:
    """A new key for one of its URLs: the old URL answers 404 from now on."""
    automation = _own(request, automation_id)
    purpose = request.POST.get("purpose", "")
    if purpose not in triggers.of(automation).URLS:
        messages.error(request, _("That URL is not one this automation has."))
    else:
        services.issue_new_urls(automation=automation, purposes=[purpose])
        messages.success(request, _("New URL issued. The old one no longer works: update whoever sends to it."))
    return redirect("account-automation", automation_id=automation.pk)


@never_cache
@login_required
def definition(request: HttpRequest, automation_id: int) -> HttpResponse:
    """GET: the definition document, editable. POST: save it, or list every error with its path."""
    automation = _own(request, automation_id)
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    if request.method != "POST":
        return _definition_page(request, automation, pretty_json(selectors.document_of(automation)) + "\n", [])
    text = request.POST.get("document", "")
    try:
        document = _document_from(text)
        name = owned.name_in(document)
        services.update_automation(automation=automation, definition=document, name=name or None)
        public_urls.prepare(automation)  # an approval step added: its link can be handed out at once
    except owned.NotADocument as error:
        return _definition_page(request, automation, text, [_("Not JSON: %(where)s") % {"where": error}])
    except InvalidDefinition as invalid:
        return _definition_page(request, automation, text, invalid.errors)
    except TriggerRefused as refusal:
        reason = _("Its trigger refused the change: %(reason)s") % {"reason": refusal}
        return _definition_page(request, automation, text, [reason])
    messages.success(request, _("Saved."))
    return redirect("account-automation", automation_id=automation.pk)


def _document_from(text: str):
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        raise owned.NotADocument(_("the document is larger than %(limit)s bytes") % {"limit": MAX_DOCUMENT_BYTES})
    return owned.read_document(text)


def _definition_page(request, automation, text: str, errors: list[str]) -> HttpResponse:
    context = {"automation": automation, "document": text, "errors": errors}
    return render(request, "accounts/definition.html", context, status=400 if errors else 200)


@require_safe
@never_cache
@login_required
def export(request: HttpRequest, automation_id: int) -> HttpResponse:
    """The definition document as a file, as export_automation writes it: never a key, never a secret."""
    automation = _own(request, automation_id)
    filename = f"{slugify(automation.name) or 'automation'}.json"
    response = HttpResponse(owned.document_text(automation), content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@never_cache
@login_required
def import_document(request: HttpRequest) -> HttpResponse:
    """GET: the import form. POST: a new automation (off) from a document uploaded or pasted, or every error."""
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    if request.method != "POST":
        return render(request, "accounts/import.html", {"document": "", "errors": []})
    text = request.POST.get("document", "")
    upload = request.FILES.get("file")
    try:
        if upload is not None:
            if upload.size > MAX_DOCUMENT_BYTES:
                raise owned.NotADocument(_("the file is larger than %(limit)s bytes") % {"limit": MAX_DOCUMENT_BYTES})
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise owned.NotADocument(_("the file is not UTF-8 text")) from None
        document = _document_from(text)
        name = owned.name_in(document, fallback=request.POST.get("name", "").strip())
        if problem := owned.name_problem(name):
            raise InvalidDefinition([f"$.name: {problem}"])
        automation = services.create_automation(owner=request.user, name=name, definition=document)
        public_urls.prepare(automation)
    except owned.NotADocument as error:
        return _import_page(request, text, [_("Not JSON: %(where)s") % {"where": error}])
    except InvalidDefinition as invalid:
        return _import_page(request, text, invalid.errors)
    messages.success(request, _("Imported, and off: turn it on when it is ready."))
    return redirect("account-automation", automation_id=automation.pk)


def _import_page(request, text: str, errors: list[str]) -> HttpResponse:
    return render(request, "accounts/import.html", {"document": text, "errors": errors}, status=400)
