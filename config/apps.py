"""The project's own app: it registers the system checks of the settings (config/checks.py)."""

from django.apps import AppConfig
from django.core import checks


class FlowgateConfig(AppConfig):
    name = "config"
    verbose_name = "Flowgate"

    def ready(self):
        from config import checks as flowgate_checks
        from overrides import django_csrf

        django_csrf.install()  # CSRF strings from one random read each (overrides/django_csrf.py)

        # `manage.py check --tag flowgate` runs these alone.
        checks.register(flowgate_checks.check_url_key_secret, checks.Tags.security, "flowgate")
        checks.register(flowgate_checks.check_public_urls, "flowgate")
        checks.register(flowgate_checks.check_pgbouncer, "flowgate")
        checks.register(flowgate_checks.check_visibility_timeout, "flowgate")
        checks.register(flowgate_checks.check_allowed_hosts, checks.Tags.security, "flowgate")
        checks.register(flowgate_checks.check_hooks_host, "flowgate")
        checks.register(flowgate_checks.check_security_headers, checks.Tags.security, "flowgate")
        checks.register(flowgate_checks.check_renamed_settings, "flowgate")
