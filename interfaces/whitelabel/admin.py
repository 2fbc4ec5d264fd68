"""Django admin of white-label domains."""

from django.contrib import admin

from interfaces.whitelabel import domains
from interfaces.whitelabel.models import WhiteLabelDomain


@admin.register(WhiteLabelDomain)
class WhiteLabelDomainAdmin(admin.ModelAdmin):
    list_display = ("domain", "owner", "created_at")
    search_fields = ("domain", "owner__username", "owner__email")
    raw_id_fields = ("owner",)

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
