"""Django admin for the hooks: deliveries, what webhook URLs verify and what they refused, the maintenance switch."""

from django.contrib import admin

from hooks import maintenance
from hooks.models import Delivery, Maintenance, Refusal, Verification


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    """Deliveries; each done one links the run it became (its retries are runs of their own, in Execution History)."""

    list_display = ("public_id", "automation", "status", "method", "received_at", "run")
    list_select_related = ("automation", "run__automation")  # a run names its automation
    ordering = ("-pk",)  # newest first, as Execution History
    list_filter = ("status", "method")
    search_fields = ("=public_id", "automation__name")
    date_hierarchy = "received_at"
    readonly_fields = (
        "public_id",
        "automation",
        "status",
        "method",
        "path",
        "query_string",
        "content_type",
        "body_size",
        "body_digest",
        "received_at",
        "run",
        "suppressed_by",
        "error",
    )
    exclude = ("body",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="body size")
    def body_size(self, delivery):
        return f"{len(delivery.body)} bytes"


@admin.register(Verification)
class VerificationAdmin(admin.ModelAdmin):
    """What each webhook URL verifies, for staff to read; its owner changes it on the automation's page. Secrets are
    shown as their hints only (the sealed copies are excluded)."""

    list_display = ("automation", "scheme", "tolerance_seconds", "refused_count", "updated_at")
    list_select_related = ("automation",)
    list_filter = ("scheme",)
    search_fields = ("automation__name",)
    fields = (
        "automation",
        "scheme",
        "tolerance_seconds",
        "secret_hint",
        "previous_hint",
        "allowed_networks",
        "refused_count",
        "updated_at",
    )
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Refusal)
class RefusalAdmin(admin.ModelAdmin):
    """Requests refused by a webhook URL's verification (401 or 403): none was stored as a delivery or ran."""

    list_display = ("received_at", "automation", "reason", "method", "client_address", "body_size")
    list_select_related = ("automation",)
    list_filter = ("reason",)
    search_fields = ("automation__name", "=client_address")
    date_hierarchy = "received_at"
    readonly_fields = ("automation", "reason", "method", "path", "client_address", "body_size", "received_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Maintenance)
class MaintenanceAdmin(admin.ModelAdmin):
    list_display = ("__str__", "note", "changed_at")

    def has_add_permission(self, request):
        return not Maintenance.objects.exists()

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        maintenance.reset()
