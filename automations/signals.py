"""Signals of automations for the apps that build on it (STYLE.md 9: automations imports none of them)."""

from django.dispatch import Signal

# Sent by the one sweeper (automations.runs.sweep) after it has queued due runs and given back lost ones: an app
# that holds work meant to become runs (hooks' pending deliveries) queues what no task holds.
sweep = Signal()
