"""Django admin for automations: edit the definition (validated), turn on and off, reset, and Execution History."""

import functools
import json

from django import forms
from django.contrib import admin, messages
from django.db import models, transaction
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from automations import definition as definitions
from automations import json_fields, lookup_tables, references, services, triggers
from automations.exceptions import NotOff
from automations.json_fields import StoredJSONField
from automations.models import Automation, LookupRow, Run, empty_definition
from automations.triggers import TriggerRefused
from publickeys import selectors as key_selectors
from publickeys.admin_display import HIDDEN, visible, with_key_visibility


class AutomationForm(forms.ModelForm):
    definition = StoredJSONField(
        initial=empty_definition,
        # A class, not a style attribute: admin's pages are under the strict Content-Security-Policy, which refuses
        # inline styles (edge/page_headers.py); its rule is in static/flowgate-admin.css (every admin page).
        widget=forms.Textarea(attrs={"rows": 24, "cols": 100, "class": "definition-editor"}),
        help_text="The definition document: trigger, steps and settings (docs/automations.md).",
    )

    class Meta:
        model = Automation
        fields = ("owner", "name", "enabled", "definition")

    def clean_definition(self):
        document = self.cleaned_data["definition"]
        problems = definitions.errors(document)
        if problems:
            raise forms.ValidationError(problems)
        return document

    def clean(self):
        """The connections the app steps name must be the owner's: an automation given to another account with
        its steps unchanged would fail at each of them."""
        cleaned = super().clean()
        owner, document = cleaned.get("owner"), cleaned.get("definition")
        checked = owner is not None and isinstance(document, dict) and "definition" not in self.errors
        if checked and (problems := references.owner_errors(document, owner.pk)):
            self.add_error("definition", problems)
        return cleaned


@admin.register(Automation)
class AutomationAdmin(admin.ModelAdmin):
    form = AutomationForm
    list_display = ("name", "owner", "enabled", "steps_count", "runs_link", "diagram_link", "updated_at")
    list_filter = ("enabled",)
    search_fields = ("name", "owner__username", "owner__email")
    readonly_fields = (
        "webhook_url",
        "web_service_url",
        "form_url",
        "chat_widget_url",
        "diagram_link",
        "created_at",
        "updated_at",
    )
    actions = ("turn_on", "turn_off", "reset_processing", "issue_new_urls")
    autocomplete_fields = ()

    @admin.display(description="steps")
    def steps_count(self, automation):
        return len(automation.definition.get("steps", []))

    @admin.display(description="Execution History")
    def runs_link(self, automation):
        url = reverse("admin:automations_run_changelist") + f"?automation__id__exact={automation.pk}"
        return format_html('<a href="{}">runs</a>', url)

    @admin.display(description="diagram")
    def diagram_link(self, automation):
        """The diagram page (interfaces/): it opens for the automation's owner only; others get 404."""
        if not automation.pk:
            return "-"
        url = reverse("automation-diagram") + f"?uuid={automation.uuid}"
        return format_html('<a href="{}" title="opens for its owner only">View diagram</a>', url)

    def get_queryset(self, request):
        return with_key_visibility(super().get_queryset(request), request, "owner")

    @admin.display(description="webhook URL")
    def webhook_url(self, automation):
        return _url(automation, services.hook_url)

    @admin.display(description="web service URL")
    def web_service_url(self, automation):
        return _url(automation, services.web_service_url)

    @admin.display(description="hosted form URL")
    def form_url(self, automation):
        return _url(automation, services.form_url)

    @admin.display(description="chat widget URL")
    def chat_widget_url(self, automation):
        return _url(automation, services.chat_widget_url)

    def save_model(self, request, automation, form, change):
        """Through the services: create (with its URLs) or update, then turn on or off as the form says.

        A trigger that refuses to turn on leaves the automation saved and
        off, and its message is shown. That includes a new trigger type on an
        automation that is on: it is then turned off (its old trigger
        deactivated) and saved with the new type. Turning off comes before
        the update, so that a new trigger type is never activated for nothing.

        A trigger that calls another app to turn on (a self-registering one)
        is saved off and turned on once admin's transaction has committed,
        so that the call holds no lock (Trigger.calls_out); its refusal is
        shown the same way.
        """
        data, wanted = form.cleaned_data, automation.enabled
        fields = {"owner": data["owner"], "name": data["name"], "definition": data["definition"]}
        later = wanted and triggers.of(automation).calls_out(automation)
        refusal = None
        with transaction.atomic():
            if change:
                stored = _locked(automation)
                if later and stored.enabled and stored.definition.get("trigger") == data["definition"].get("trigger"):
                    later = False  # on, its trigger unchanged: its registration stays, nothing is called
                if not wanted or later:
                    services.turn_off(automation=stored)
                try:
                    saved = services.update_automation(automation=stored, **fields)
                except TriggerRefused as refused:
                    stored = _locked(automation)  # the refused update rolled back the row, not the instance
                    services.turn_off(automation=stored)
                    saved, refusal = services.update_automation(automation=stored, **fields), refused
            else:
                saved = services.create_automation(**fields)
            automation.pk = saved.pk
            if later:
                transaction.on_commit(functools.partial(self._turn_on_later, request, saved))
            elif wanted and refusal is None:
                try:
                    services.turn_on(automation=saved)
                except TriggerRefused as refused:
                    refusal = refused
            if refusal is not None:
                self.message_user(request, f"{saved}: left off, its trigger refused: {refusal}", messages.ERROR)
            automation.enabled = saved.enabled

    def _turn_on_later(self, request, automation):
        try:
            services.turn_on(automation=automation)
        except TriggerRefused as refusal:
            self.message_user(request, f"{automation}: left off, its trigger refused: {refusal}", messages.ERROR)

    def delete_model(self, request, automation):
        """Through the service, after Django's delete view has committed its transaction: the service commits twice."""
        transaction.on_commit(functools.partial(services.delete_automation, automation=automation))

    def delete_queryset(self, request, queryset):
        """The "delete selected" action: each automation through the service, as delete_model."""
        for automation in list(queryset):
            transaction.on_commit(functools.partial(services.delete_automation, automation=automation))

    @admin.action(permissions=["change"], description="Turn on (replays kept deliveries)")
    def turn_on(self, request, queryset):
        turned = 0
        for automation in queryset:
            try:
                services.turn_on(automation=automation)
            except TriggerRefused as refusal:
                self.message_user(request, f"{automation}: left off, its trigger refused: {refusal}", messages.ERROR)
            else:
                self.log_change(request, automation, "Turned on.")
                turned += 1
        self.message_user(request, f"{turned} automation(s) on.")

    @admin.action(permissions=["change"], description="Turn off (deliveries are kept)")
    def turn_off(self, request, queryset):
        for automation in queryset:
            services.turn_off(automation=automation)
            self.log_change(request, automation, "Turned off.")
        self.message_user(request, f"{queryset.count()} automation(s) off.")

    @admin.action(
        permissions=["change"],
        description="Processing > Reset: discard unprocessed deliveries, retries, trigger state "
        "and This-automation rows",
    )
    def reset_processing(self, request, queryset):
        for automation in queryset:
            try:
                services.reset(automation=automation)
            except NotOff as error:
                self.message_user(request, f"{automation}: {error}.", messages.ERROR)
            else:
                self.log_change(request, automation, "Processing > Reset.")
                self.message_user(request, f"{automation}: reset.")

    @admin.action(
        permissions=["change"], description="Issue new webhook and web service URLs (the old ones stop working)"
    )
    def issue_new_urls(self, request, queryset):
        for automation in queryset:
            services.issue_new_urls(automation=automation)
            self.log_change(request, automation, "Issued new URLs; the old ones stopped working.")
        self.message_user(request, f"{queryset.count()} automation(s) have new URLs; the old ones answer 404.")


def _locked(automation) -> Automation:
    """The automation as stored, its row held until the transaction ends."""
    return Automation.objects.select_for_update().get(pk=automation.pk)


def _url(automation, url_of) -> str:
    if not automation.pk:
        return "issued when saved"
    return (url_of(automation) or "-") if visible(automation) else HIDDEN


class SuppressedFilter(admin.SimpleListFilter):
    title = "suppressed duplicates"
    parameter_name = "suppressed"

    def lookups(self, request, model_admin):
        return [("yes", "some suppressed")]

    def queryset(self, request, queryset):
        return queryset.filter(suppressed_count__gt=0) if self.value() == "yes" else queryset


class WaitingFilter(admin.SimpleListFilter):
    """Waiting runs, split by what wakes them: a person's answer (or its expiry), or a time."""

    title = "waiting"
    parameter_name = "waiting"

    def lookups(self, request, model_admin):
        return [("any", "waiting"), ("person", "for a person"), ("time", "for a time")]

    def queryset(self, request, queryset):
        waiting = queryset.filter(status=Run.Status.WAITING)
        # Every wait for a person says what happens when it expires (automations/waiting.py); a delay does not.
        if self.value() == "any":
            return waiting
        if self.value() == "person":
            return waiting.filter(waiting_for__has_key="on_expiry")
        if self.value() == "time":
            return waiting.exclude(waiting_for__has_key="on_expiry")
        return queryset


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    """Execution History: each run with its trigger data, each step's result and error, and the Suppressed count."""

    list_display = ("id", "automation", "source", "state", "attempt", "suppressed_count", "started_at", "finished_at")
    list_filter = (WaitingFilter, "status", "source", SuppressedFilter, "automation")
    search_fields = ("automation__name", "error")
    date_hierarchy = "started_at"
    fields = (
        "automation",
        "source",
        "state",
        "attempt",
        "suppressed_count",
        "started_at",
        "finished_at",
        "error",
        "waiting",
        "trigger_data",
        "step_results",
    )
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return with_key_visibility(super().get_queryset(request), request, "automation__owner")

    @admin.display(description="state", ordering="status")
    def state(self, run):
        """The status, and for a waiting run what it waits for and until when."""
        if run.status != Run.Status.WAITING:
            return run.get_status_display()
        return f"waiting: {_waiting_for(run)}"

    @admin.display(description="waits for")
    def waiting(self, run):
        """What it waits for, its link (rendered from the key's id kept in waiting_for, never stored in clear)."""
        if run.status != Run.Status.WAITING:
            return "-"
        waiting_for = run.waiting_for or {}
        link = key_selectors.link_of_key_id(waiting_for.get("public_key_id"))
        if link and not visible(run):
            shown = format_html("<br>{} link: {}", link[0], HIDDEN)
        else:
            shown = format_html('<br>{} link: <a href="{}" rel="noreferrer">{}</a>', *link, link[1]) if link else ""
        return format_html(
            "{}{}<pre>{}</pre>",
            _waiting_for(run),
            shown,
            json.dumps(waiting_for, indent=2, ensure_ascii=False)[:20_000],
        )

    @admin.display(description="trigger data")
    def trigger_data(self, run):
        return format_html("<pre>{}</pre>", json.dumps(run.trigger, indent=2, ensure_ascii=False)[:100_000])

    @admin.display(description="steps")
    def step_results(self, run):
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td><pre>{}</pre></td><td>{}</td></tr>",
            (
                (
                    step["id"],
                    step["kind"],
                    step.get("status", ""),
                    json.dumps(step.get("output"), indent=2, ensure_ascii=False)[:20_000],
                    step.get("error", "") or step.get("note", ""),
                )
                for step in run.steps
            ),
        )
        return format_html(
            "<table><tr><th>step</th><th>kind</th><th>status</th><th>output</th><th>error</th></tr>{}</table>", rows
        )


def _waiting_for(run) -> str:
    waiting_for = run.waiting_for or {}
    what = f"step {waiting_for.get('step', '?')} ({waiting_for.get('kind', '?')})"
    if waiting_for.get("title"):
        what += f": {str(waiting_for['title'])[:100]}"
    if "on_expiry" in waiting_for:  # a person's answer: resume_at is when it expires, if it does
        if run.answer is not None:
            return f"{what}, answered, about to go on"
        if run.resume_at is None:
            return f"{what}, until answered"
        return f"{what}, expires at {run.resume_at:%Y-%m-%d %H:%M:%S} UTC"
    if run.resume_at:
        return f"{what}, goes on at {run.resume_at:%Y-%m-%d %H:%M:%S} UTC"
    return what


@admin.register(LookupRow)
class LookupRowAdmin(admin.ModelAdmin):
    formfield_overrides = {models.JSONField: json_fields.OVERRIDES}
    list_display = ("id", "table", "owner", "automation", "updated_at")
    list_filter = ("table",)
    search_fields = ("table", "owner__username")

    # Rows added, moved or deleted here are counted anew in their tables (automations/lookup_tables.py), in the
    # transaction admin saves or deletes them in.
    TABLE = ("owner_id", "automation_id", "table")

    def save_model(self, request, obj, form, change):
        before = set(LookupRow.objects.filter(pk=obj.pk).values_list(*self.TABLE)) if change else set()
        super().save_model(request, obj, form, change)
        self._recount(before | {tuple(getattr(obj, name) for name in self.TABLE)})

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        self._recount({tuple(getattr(obj, name) for name in self.TABLE)})

    def delete_queryset(self, request, queryset):
        tables = set(queryset.order_by().values_list(*self.TABLE).distinct())
        super().delete_queryset(request, queryset)
        self._recount(tables)

    def _recount(self, tables) -> None:
        for owner_id, automation_id, table in sorted(tables, key=str):
            lookup_tables.recount(owner_id=owner_id, automation_id=automation_id, table=table)
