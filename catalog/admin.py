"""Django admin for the catalog: staff edit apps and operations; every change schedules a feed rebuild."""

import base64
import re

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.utils.html import format_html

from automations import json_fields
from catalog import feed, retirement
from catalog.importer import LOGO_TYPES, MAX_LOGO_BYTES, OPERATION_SCHEMA
from catalog.models import App, Operation


def _differs_from_stored(app: App) -> bool:
    stored = App.objects.get(pk=app.pk)
    for model_field in App._meta.concrete_fields:
        if model_field.name in ("created_at", "updated_at"):
            continue
        new, old = getattr(app, model_field.attname), getattr(stored, model_field.attname)
        if isinstance(new, memoryview) or isinstance(old, memoryview):
            new, old = new and bytes(new), old and bytes(old)
        if new != old:
            return True
    return False


class OperationForm(forms.ModelForm):
    """The importer's rules for an operation's key and method (catalog/importer.py), so admin stores no other."""

    http_method = forms.ChoiceField(
        choices=[(method, method or "-") for method in OPERATION_SCHEMA["properties"]["http_method"]["enum"]],
        required=False,
    )

    class Meta:
        model = Operation
        fields = "__all__"

    def clean_key(self):
        key = self.cleaned_data["key"]
        if not re.fullmatch(OPERATION_SCHEMA["properties"]["key"]["pattern"], key):
            raise forms.ValidationError("lowercase letters, digits and _ . : - only")
        return key


class OperationInline(admin.TabularInline):
    model = Operation
    form = OperationForm
    formfield_overrides = {models.JSONField: json_fields.OVERRIDES}
    extra = 0
    fields = (
        "kind",
        "key",
        "name",
        "description",
        "position",
        "listed",
        "delivery_mode",
        "http_method",
        "endpoint",
        "instructions",
    )


class AppForm(forms.ModelForm):
    logo_file = forms.FileField(
        required=False, help_text=f"PNG, SVG, JPEG, WebP or GIF, at most {MAX_LOGO_BYTES // 1024} KB."
    )
    remove_logo = forms.BooleanField(required=False)

    class Meta:
        model = App
        exclude = ("logo", "logo_content_type")

    def clean_logo_file(self):
        upload = self.cleaned_data.get("logo_file")
        if upload is None:
            return None
        if upload.content_type not in LOGO_TYPES:
            raise forms.ValidationError(f"Unsupported type {upload.content_type}; use one of {', '.join(LOGO_TYPES)}.")
        if upload.size > MAX_LOGO_BYTES:
            raise forms.ValidationError(f"The logo is {upload.size} bytes; the limit is {MAX_LOGO_BYTES}.")
        return upload

    def save(self, commit=True):
        app = super().save(commit=False)
        upload = self.cleaned_data.get("logo_file")
        if upload is not None:
            app.logo, app.logo_content_type = upload.read(), upload.content_type
        elif self.cleaned_data.get("remove_logo"):
            app.logo, app.logo_content_type = None, ""
        if commit:
            app.save()
        return app


class RetiredFilter(admin.SimpleListFilter):
    title = "retired"
    parameter_name = "retired"

    def lookups(self, request, model_admin):
        return (("yes", "Retired"), ("no", "Not retired"))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(retired_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(retired_at__isnull=True)
        return queryset


@admin.register(App)
class AppAdmin(admin.ModelAdmin):
    form = AppForm
    formfield_overrides = {models.JSONField: json_fields.OVERRIDES}
    inlines = [OperationInline]
    list_display = (
        "name",
        "slug",
        "category",
        "auth_type",
        "tier",
        "sort_order",
        "published",
        "retired_at",
        "updated_at",
    )
    list_filter = ("category", "auth_type", "tier", RetiredFilter, "published")
    search_fields = ("name", "slug", "app_domain", "description")
    readonly_fields = ("logo_preview", "tier", "sort_order", "created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("slug", "name", "description", "category", "auth_type", "app_domain")}),
        ("Listing", {"fields": ("published", "popularity", "tier", "sort_order", "retired_at")}),
        ("Logo", {"fields": ("logo_preview", "logo_file", "remove_logo")}),
        ("Internal", {"fields": ("auth_config", "created_at", "updated_at"), "classes": ("collapse",)}),
    )
    actions = ["retire", "unretire"]
    list_per_page = 50

    @admin.display(description="Logo")
    def logo_preview(self, app):
        if not app.logo:
            return "No logo"
        data = base64.b64encode(bytes(app.logo)).decode()
        return format_html('<img src="data:{};base64,{}" alt="" width="64" height="64">', app.logo_content_type, data)

    def save_model(self, request, obj, form, change):
        # Saving bumps updated_at, which the feed shows as last_updated: an
        # unchanged app is not saved, so "Save" alone does not move it.
        if not change or _differs_from_stored(obj):
            super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        if any(formset.deleted_objects for formset in formsets):
            form.instance.save(update_fields=["updated_at"])  # removing an operation edits the connector
        feed.schedule_feed_rebuild()

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        feed.schedule_feed_rebuild()

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        feed.schedule_feed_rebuild()

    @admin.action(
        permissions=["change"], description="Retire selected apps (they leave the feed after the retirement window)"
    )
    def retire(self, request, queryset):
        count = retirement.retire_apps(queryset)
        for app in queryset:
            self.log_change(request, app, "Retired.")
        self.message_user(request, f"Retired {count} apps.", messages.SUCCESS)

    @admin.action(permissions=["change"], description="Withdraw retirement of selected apps")
    def unretire(self, request, queryset):
        count = retirement.unretire_apps(queryset)
        for app in queryset:
            self.log_change(request, app, "Retirement withdrawn.")
        self.message_user(request, f"Restored {count} apps.", messages.SUCCESS)
