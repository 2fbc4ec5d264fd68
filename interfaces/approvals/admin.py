"""Django admin of approval queues and their items."""

from django.contrib import admin
from django.utils.html import format_html

from interfaces.approvals import queues
from interfaces.approvals.models import ApprovalItem, ApprovalQueue
from publickeys.admin_display import HIDDEN, visible, with_key_visibility


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

    def get_queryset(self, request):
        return with_key_visibility(super().get_queryset(request), request, "automation__owner")

    def delete_model(self, request, queue):
        queues.delete_queues(ApprovalQueue.objects.filter(pk=queue.pk))

    def delete_queryset(self, request, queryset):
        queues.delete_queues(queryset)

    @admin.display(description="approval link")
    def approval_link(self, queue):
        if not visible(queue):
            return HIDDEN
        url = queues.approval_url(queue)
        return format_html('<a href="{}" rel="noreferrer">{}</a>', url, url) if url else "-"
