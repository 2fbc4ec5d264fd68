"""Django admin for the hooks: deliveries, what webhook URLs verify and what they refused, the maintenance switch."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from catalog.models import Operation
from hooks import endpoints, maintenance
from hooks.models import Delivery, Maintenance, Refusal, SharedEndpoint, Verification


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    """Deliveries; each done one links the run it became (its retries are runs of their own, in Execution History).

    A connection's or an app's delivery has no automation: it is done once
    fanned out (each automation's copy is a delivery of that automation,
    with the connection), or unmatched with the reason in its error.
    """

    list_display = ("public_id", "automation", "connection", "app", "status", "method", "received_at", "run")
    list_select_related = ("automation", "connection", "app", "run__automation")  # a run names its automation
    ordering = ("-pk",)  # newest first, as Execution History
    list_filter = ("status", "method", ("app", admin.RelatedOnlyFieldListFilter))
    search_fields = ("=public_id", "automation__name")
    date_hierarchy = "received_at"
    readonly_fields = (
        "public_id",
        "automation",
        "connection",
        "app",
        "account",
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


@admin.register(SharedEndpoint)
class SharedEndpointAdmin(admin.ModelAdmin):
    """Apps with a shared-endpoint trigger and their one callback URL, which staff (or the connector builder) register
    with the app once; its key is issued at the first view. The app's unmatched deliveries are a click away."""

    list_display = ("name", "slug", "unmatched")
    search_fields = ("slug", "name")
    fields = ("name", "slug", "callback_url", "routing", "unmatched")
    readonly_fields = fields

    def get_queryset(self, request):
        shared = Operation.objects.filter(
            kind=Operation.Kind.TRIGGER, delivery_mode=Operation.DeliveryMode.SHARED_ENDPOINT
        ).values("app_id")
        return super().get_queryset(request).filter(pk__in=shared)

    @admin.display(description="callback URL")
    def callback_url(self, app):
        return endpoints.app_url(app) or "-"

    @admin.display(description="routing rule")
    def routing(self, app):
        return (app.auth_config or {}).get("routing") or "none: every delivery ends unmatched"

    @admin.display(description="unmatched deliveries")
    def unmatched(self, app):
        count = Delivery.objects.filter(app=app, automation__isnull=True, status=Delivery.Status.UNMATCHED).count()
        url = reverse("admin:hooks_delivery_changelist") + f"?app__id__exact={app.pk}&status__exact=unmatched"
        return format_html('<a href="{}">{}</a>', url, count)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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
