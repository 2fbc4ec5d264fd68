"""Django admin of the pages: white-label domains, approval queues."""

from django.contrib import admin
from django.utils.html import format_html

from interfaces import approvals, domains
from interfaces.models import ApprovalItem, ApprovalQueue, WhiteLabelDomain
from publickeys.admin_display import HIDDEN, visible, with_key_visibility


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
        approvals.delete_queues(ApprovalQueue.objects.filter(pk=queue.pk))

    def delete_queryset(self, request, queryset):
        approvals.delete_queues(queryset)

    @admin.display(description="approval link")
    def approval_link(self, queue):
        if not visible(queue):
            return HIDDEN
        url = approvals.approval_url(queue)
        return format_html('<a href="{}" rel="noreferrer">{}</a>', url, url) if url else "-"
