"""Django admin of white-label domains: the domain, the name its pages show, and its logo."""

from django import forms
from django.contrib import admin

from interfaces.whitelabel import domains, logos
from interfaces.whitelabel.models import WhiteLabelDomain


class WhiteLabelDomainForm(forms.ModelForm):
    logo_file = forms.FileField(
        required=False,
        help_text=f"PNG, JPEG, WebP or GIF (known by its bytes; no SVG), at most {logos.MAX_BYTES // 1024} KB.",
    )
    remove_logo = forms.BooleanField(required=False)

    class Meta:
        model = WhiteLabelDomain
        fields = ("owner", "domain", "name")

    def clean_logo_file(self) -> logos.Logo | None:
        upload = self.cleaned_data.get("logo_file")
        return logos.read_logo(upload) if upload else None

    def save(self, commit=True):
        row = super().save(commit=False)
        logo = self.cleaned_data.get("logo_file")
        if logo is not None:
            row.logo, row.logo_content_type, row.logo_digest = logo.content, logo.content_type, logo.digest
        elif self.cleaned_data.get("remove_logo"):
            row.logo, row.logo_content_type, row.logo_digest = None, "", ""
        if commit:
            row.save()
        return row


@admin.register(WhiteLabelDomain)
class WhiteLabelDomainAdmin(admin.ModelAdmin):
    form = WhiteLabelDomainForm
    list_display = ("domain", "name", "owner", "created_at")
    search_fields = ("domain", "name", "owner__username", "owner__email")
    raw_id_fields = ("owner",)
    readonly_fields = ("logo_preview",)
    fields = ("owner", "domain", "name", "logo_preview", "logo_file", "remove_logo")

    @admin.display(description="logo")
    def logo_preview(self, obj):
        if obj is None or not obj.logo_digest:
            return "none"
        return f"{obj.logo_content_type}, {len(obj.logo or b'')} bytes"

    # Each change is answered at once by this process and within domains.CACHE_SECONDS by the others.
    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        domains.forget()

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        domains.forget()

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        domains.forget()
