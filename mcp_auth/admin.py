"""Admin of the authorization server: app callbacks, clients with their registration, users' connected clients.

django-oauth-toolkit registers its own admin for clients (Applications),
grants, access and refresh tokens, with revoke actions and tokens masked;
the client admin is extended here, and the user admin shows each user's
connected clients with an action to disconnect them.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from oauth2_provider.models import get_application_admin_class, get_application_model, get_refresh_token_model

from mcp_auth import connections
from mcp_auth.models import AppCallback, RegisteredClient
from mcp_auth.redirect_uris import redirect_uri_problem, schemes_of

Application = get_application_model()
User = get_user_model()


@admin.register(AppCallback)
class AppCallbackAdmin(admin.ModelAdmin):
    list_display = ("uri", "app_name", "created_at")
    search_fields = ("uri", "app_name")


class RegistrationInline(admin.StackedInline):
    model = RegisteredClient
    can_delete = False
    readonly_fields = ("token_endpoint_auth_method", "registered_at", "registered_from", "first_token_at")
    fields = readonly_fields
    extra = 0
    max_num = 0


def _refresh_tokens_url(**filters) -> str:
    meta = get_refresh_token_model()._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist") + "?" + urlencode(filters)


class ClientForm(forms.ModelForm):
    """The toolkit's client form, with redirect URIs checked by the service's rules (mcp_auth/redirect_uris.py).

    django-oauth-toolkit's clean() allows only http and https, so a client of
    an app callback on the allow list (cursor://...) could not be saved here.
    Once the URIs pass the service's rules, clean() is told their schemes.
    """

    def clean_redirect_uris(self) -> str:
        uris = self.cleaned_data["redirect_uris"]
        problems = [f"{uri[:200]} {problem}" for uri in uris.split() if (problem := redirect_uri_problem(uri))]
        if problems:
            raise forms.ValidationError(problems)
        schemes = schemes_of(uris)
        self.instance.get_allowed_schemes = lambda: schemes  # read by the toolkit's Application.clean()
        return uris


class ClientAdmin(get_application_admin_class()):
    form = ClientForm
    inlines = [RegistrationInline]
    list_display = ("pk", "name", "client_id", "client_type", "registration_source", "registered_at", "first_token_at")
    list_select_related = ("registration",)
    actions = ["disconnect_everyone"]

    @admin.display(description="registered", ordering="registration__registered_at")
    def registered_at(self, obj):
        registration = getattr(obj, "registration", None)
        return registration.registered_at if registration else "-"

    @admin.display(description="first token", ordering="registration__first_token_at")
    def first_token_at(self, obj):
        registration = getattr(obj, "registration", None)
        return (registration.first_token_at or "never") if registration else "-"

    @admin.action(permissions=["change"], description="Revoke every token of the selected clients")
    def disconnect_everyone(self, request, queryset):
        revoked = 0
        for application in queryset:
            revoked += connections.disconnect(application=application)
            self.log_change(request, application, "Revoked every token.")
        self.message_user(request, f"Revoked {revoked} tokens.", messages.SUCCESS)


admin.site.unregister(Application)
admin.site.register(Application, ClientAdmin)


class UserWithClientsAdmin(UserAdmin):
    readonly_fields = (*UserAdmin.readonly_fields, "connected_clients")
    fieldsets = (*UserAdmin.fieldsets, ("Connected AI clients (MCP)", {"fields": ("connected_clients",)}))
    actions = [*UserAdmin.actions, "disconnect_clients"]

    @admin.display(description="clients with a live token")
    def connected_clients(self, user):
        if user is None or user.pk is None:
            return "-"
        rows = connections.connected_clients(user=user)
        if not rows:
            return "none"
        return format_html(
            "<ul>{}</ul>",
            format_html_join(
                "",
                '<li>{} (<code>{}</code>), since {} · <a href="{}">tokens, to revoke</a></li>',
                (
                    (
                        row.application.name or "unnamed client",
                        row.application.client_id,
                        row.since.strftime("%Y-%m-%d %H:%M UTC"),
                        _refresh_tokens_url(user__id__exact=user.pk, application__id__exact=row.application.pk),
                    )
                    for row in rows
                ),
            ),
        )

    @admin.action(permissions=["change"], description="Disconnect every AI client (MCP) of the selected users")
    def disconnect_clients(self, request, queryset):
        revoked = 0
        for user in queryset:
            revoked += connections.disconnect(user=user)
            self.log_change(request, user, "Disconnected every AI client (MCP).")
        self.message_user(request, f"Revoked {revoked} tokens.", messages.SUCCESS)


admin.site.unregister(User)
admin.site.register(User, UserWithClientsAdmin)
