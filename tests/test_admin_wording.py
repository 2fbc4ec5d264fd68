"""Django admin's column headings of the project's own models: one spelling of "ID", SPEC's "Suppressed"."""

import re

import pytest
from django.contrib import admin
from django.contrib.admin.utils import label_for_field
from django.utils.text import capfirst

from automations.models import Run

OWN_APPS = ("accounts", "automations", "catalog", "hooks", "interfaces", "mcp_auth", "publickeys")
HEADINGS = [
    (model, field)
    for model, model_admin in admin.site._registry.items()
    if model._meta.app_label in OWN_APPS
    for field in model_admin.list_display
]


@pytest.mark.parametrize(("model", "field"), HEADINGS, ids=lambda item: getattr(item, "__name__", item))
def test_a_column_heading_spells_id_as_ID(model, field):
    heading = str(label_for_field(field, model, admin.site._registry[model]))
    assert not re.search(r"\b(Id|id|Pk|pk)\b", heading), heading


def test_execution_history_counts_duplicates_under_suppressed():
    model_admin = admin.site._registry[Run]
    assert capfirst(label_for_field("suppressed_count", Run, model_admin)) == "Suppressed"  # SPEC 3
