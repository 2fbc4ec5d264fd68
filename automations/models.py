"""Automations, their runs, lookup rows and their tables' counts, and web service usage."""

import uuid

from django.conf import settings
from django.contrib.contenttypes.fields import GenericRelation
from django.db import models
from django.utils.translation import gettext_lazy as _


def empty_definition() -> dict:
    return {"trigger": {"type": "webhook"}, "steps": [], "settings": {}}


class Automation(models.Model):
    """A user's automation: its definition document (automations/definition.py) and its public URL keys."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="automations")
    # Names the automation in its diagram's URL (/automation?uuid=...), which only its owner can open.
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    enabled = models.BooleanField(
        default=False, help_text="On: deliveries run. Off: they are kept and replayed when turned on."
    )
    definition = models.JSONField(default=empty_definition)
    # The keys of its webhook and web service URLs (publickeys/): deleted with it.
    public_keys = GenericRelation("publickeys.PublicKey", content_type_field="target_type", object_id_field="target_id")
    trigger_state = models.JSONField(default=dict, blank=True, help_text="What the trigger remembers between runs.")
    # The id of the last run started before the last Processing > Reset: a run up to it that fails is not retried,
    # as the reset cleared the pending retries (automations.runs.settle; SPEC 3).
    reset_after_run = models.BigIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name

    @property
    def settings(self) -> dict:
        return self.definition.get("settings", {})

    @property
    def suppress_duplicates(self) -> bool:
        return self.settings.get("suppress_duplicates", True)

    @property
    def retry_attempts(self) -> int:
        return self.settings.get("retries", {}).get("max_attempts", 3)

    @property
    def retry_backoff(self) -> int:
        return self.settings.get("retries", {}).get("backoff_seconds", 60)


class Run(models.Model):
    """One execution of an automation's steps for one trigger event (a delivery or a web service call)."""

    class Status(models.TextChoices):
        RUNNING = "running"
        WAITING = "waiting", "waiting (for a time or a person)"
        SUCCEEDED = "succeeded"
        STOPPED = "stopped", "stopped by a condition"
        FAILED = "failed"
        ABANDONED = "abandoned", "abandoned (its worker was lost)"

    class Source(models.TextChoices):
        # Shown to owners on their runs pages, in their language.
        WEBHOOK = "webhook", _("webhook")
        WEB_SERVICE = "web_service", _("web service")
        FORM = "form", _("hosted form")
        CHAT = "chat", _("chat message")

    automation = models.ForeignKey(Automation, on_delete=models.CASCADE, related_name="runs")
    source = models.CharField(max_length=20, choices=Source.choices)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    attempt = models.PositiveIntegerField(default=1)
    # A retry's first attempt (automations.runs.settle): every attempt of one trigger event points at the first.
    retry_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="retries", editable=False
    )
    trigger = models.JSONField(default=dict)
    # The key of the URL the trigger came through, when it is known for sure: a step that sends trigger.path out
    # gets it as requested, rebuilt from the key's sealed copy (docs/public-keys.md). Never the key itself.
    trigger_key = models.ForeignKey(
        "publickeys.PublicKey", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", editable=False
    )
    # The definition the run started with: a run resumed after a wait goes on with its own steps,
    # whatever the automation was changed to meanwhile.
    definition = models.JSONField(default=dict, editable=False)
    steps = models.JSONField(default=list, help_text="Each step's id, kind, status, output and error.")
    error = models.TextField(blank=True)
    suppressed_count = models.PositiveIntegerField(
        "suppressed",
        default=0,
        help_text="Duplicate deliveries that started no run because they repeated this one. "
        "Only a run that succeeded or was stopped by a condition suppresses duplicates.",
    )
    # What a waiting run waits for ({"step", "kind", "until", ...}) and when beat resumes it
    # (null: only an answer does).
    waiting_for = models.JSONField(null=True, blank=True)
    resume_at = models.DateTimeField(null=True, blank=True)
    # A person's answer to the wait (a form, a decision), kept until the run goes on with it: the
    # first answer wins (runs.answer), and a worker lost while going on finds it again.
    answer = models.JSONField(null=True, blank=True, editable=False)
    # The worker that holds a running run, and until when (RUN_LEASE_SECONDS: past it, the sweeper gives it back).
    # A web service call's run has a claim and no lease: the caller's request holds it.
    claim = models.UUIDField(null=True, blank=True, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    lost_workers = models.PositiveSmallIntegerField(default=0, editable=False)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]
        verbose_name = "run"
        verbose_name_plural = "Execution History"
        indexes = [
            models.Index(fields=["automation", "-started_at"]),
            # Partial: only waiting and resumed runs are in it, so it costs a webhook's run nothing.
            models.Index(fields=["resume_at"], name="run_waiting_due", condition=models.Q(status="waiting")),
            models.Index(fields=["lease_until"], name="run_lease", condition=models.Q(lease_until__isnull=False)),
        ]

    def __str__(self) -> str:
        return f'run {self.pk} of "{self.automation.name}" ({self.status})'


class StepEffect(models.Model):
    """What one step of one run did outside the run (a link issued and mailed, an approval item placed).

    Kept per (run, step position) as soon as it is done, so that a step run
    a second time for the same run finds it instead of acting again: a
    worker lost after the step acted, before the run was saved as waiting,
    gives the run back and the step runs again (automations/effects.py).
    data holds ids and times, never a key in clear.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="step_effects")
    position = models.PositiveSmallIntegerField(help_text="The step's index in the run's definition.")
    step = models.CharField(max_length=100, help_text="The step's id, for whoever reads the row.")
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "position"], name="one_effect_per_run_step")]

    def __str__(self) -> str:
        return f"effect of step {self.step} of run {self.run_id}"


class LookupRow(models.Model):
    """A row of a lookup table, scoped to one automation or shared by its owner's account (automation null)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lookup_rows")
    automation = models.ForeignKey(
        Automation, on_delete=models.CASCADE, null=True, blank=True, related_name="lookup_rows"
    )
    table = models.CharField(max_length=100)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["owner", "table", "automation"])]


class LookupTable(models.Model):
    """How many rows one lookup table holds, kept beside them (automations/lookup_tables.py): an add checks the
    table's cap on this one row, where counting the rows cost time in proportion to them (46 ms at the cap)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lookup_tables")
    automation = models.ForeignKey(
        Automation, on_delete=models.CASCADE, null=True, blank=True, related_name="lookup_tables"
    )
    table = models.CharField(max_length=100)
    rows = models.PositiveIntegerField(default=0)

    class Meta:
        # Two partial constraints, as a unique constraint takes NULLs (the account's tables) as all different.
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "automation", "table"],
                condition=models.Q(automation__isnull=False),
                name="one_count_per_automation_table",
            ),
            models.UniqueConstraint(
                fields=["owner", "table"],
                condition=models.Q(automation__isnull=True),
                name="one_count_per_account_table",
            ),
        ]


class WebServiceUsage(models.Model):
    """Web service calls of one account in one calendar month (UTC), counted against WEB_SERVICE_MONTHLY_QUOTA."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="web_service_usage")
    month = models.DateField(help_text="The first day of the month.")
    calls = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "month"], name="one_usage_row_per_month")]
