"""Django admin for the hooks: deliveries and the maintenance switch."""

from django.contrib import admin

from hooks import maintenance
from hooks.models import Delivery, Maintenance


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


@admin.register(Maintenance)
class MaintenanceAdmin(admin.ModelAdmin):
    list_display = ("__str__", "note", "changed_at")

    def has_add_permission(self, request):
        return not Maintenance.objects.exists()

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        maintenance.reset()
