"""Django admin for approval queues: each automation's approval link and its items with their outcome."""

from django.contrib import admin
from django.utils.html import format_html

from interfaces import approvals
from interfaces.models import ApprovalItem, ApprovalQueue


class ApprovalItemInline(admin.TabularInline):
    model = ApprovalItem
    fields = ("title", "created_at", "expires_at", "decision", "comment", "decided_at", "decided_from", "run")
    readonly_fields = fields
    extra = 0
    max_num = 0
    show_change_link = False
    ordering = ("-created_at",)

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ApprovalQueue)
class ApprovalQueueAdmin(admin.ModelAdmin):
    list_display = ("automation", "approval_link", "created_at")
    search_fields = ("automation__name",)
    fields = ("automation", "approval_link", "created_at")
    readonly_fields = fields
    inlines = (ApprovalItemInline,)

    def has_add_permission(self, request):
        return False

    @admin.display(description="approval link")
    def approval_link(self, queue):
        url = approvals.approval_url(queue)
        return format_html('<a href="{}" rel="noreferrer">{}</a>', url, url) if url else "-"
