"""Connections in admin: read-only, the credential shown as its hint only (the sealed copy is excluded)."""

from django.contrib import admin

from connections.models import Connection


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
