"""Connections in admin: read-only, the credential shown as its hint only (the sealed copy is excluded); the webhooks
registered in other apps with their state, and a removal that failed tried again at once."""

from django.contrib import admin, messages
from django.db import transaction
from django.utils import timezone

from connections import registrations
from connections.models import Connection, Registration


@admin.register(Connection)
class ConnectionAdmin(admin.ModelAdmin):
    """Staff see who connected what and in which state; owners connect and change on /account/connections. Deleting
    is left to staff for an account that must go (an automation using it then fails until reconnected)."""

    list_display = ("label", "app", "owner", "auth_type", "state", "credential_hint", "last_used_at", "created_at")
    list_select_related = ("app", "owner")
    list_filter = ("state", "auth_type")
    search_fields = ("label", "app__slug", "app__name", "owner__username")
    fields = (
        "owner",
        "app",
        "label",
        "auth_type",
        "state",
        "problem",
        "credential_hint",
        "created_at",
        "updated_at",
        "last_used_at",
        "last_checked_at",
    )
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Registration)
class RegistrationAdmin(admin.ModelAdmin):
    """Staff see each webhook made in another app for a self-registering trigger, and whether its removal failed
    (docs/connections.md, "App triggers"). Read-only: the records follow the automations; a failed removal can be
    tried again now rather than at its next try, by staff who may change registrations (every field stays
    read-only)."""

    list_display = ("pk", "app", "automation", "connection", "state", "attempts", "next_try_at", "last_error")
    list_select_related = ("automation", "connection__app", "operation__app")
    list_filter = ("state",)
    search_fields = ("remote_id", "connection__app__slug", "connection__label", "automation__name")
    fields = (
        "automation",
        "connection",
        "operation",
        "remote_id",
        "url_digest",
        "state",
        "attempts",
        "next_try_at",
        "last_error",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    actions = ["retry_removal"]

    @admin.display(description="app")
    def app(self, registration):
        operation = registration.operation
        return operation.app.name if operation is not None else "-"

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # a record goes only once the app confirmed the removal

    @admin.action(permissions=["change"], description="Retry removal now")
    def retry_removal(self, request, queryset):
        """Removals that failed, or are under way past their lease, tried now (outside any transaction)."""
        now = timezone.now()
        with transaction.atomic():
            ids = list(
                queryset.select_for_update(skip_locked=True)
                .filter(state__in=[Registration.State.REMOVAL_FAILED, Registration.State.REMOVING])
                .exclude(state=Registration.State.REMOVING, next_try_at__gt=now)
                .values_list("pk", flat=True)
            )
            queryset.model.objects.filter(pk__in=ids).update(
                state=Registration.State.REMOVING, next_try_at=now + registrations.LEASE, updated_at=now
            )
        removed = registrations.remove(ids) if ids else 0
        for registration in Registration.objects.filter(pk__in=ids):
            self.log_change(request, registration, f"Retried its removal: {registration.get_state_display()}.")
        level = messages.SUCCESS if removed == len(ids) else messages.WARNING
        self.message_user(request, f"{removed} of {len(ids)} removal(s) confirmed by the app.", level)
