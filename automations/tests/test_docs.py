"""docs/automations.md names every trigger type and step kind the code has."""

import re

import pytest

from automations import steps, triggers
from tests.test_settings import ROOT

DOC = (ROOT / "docs" / "automations.md").read_text()


def _table_rows(heading: str) -> set[str]:
    """The first column's `names` of the table under a `## heading`."""
    section = DOC.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE))


@pytest.mark.parametrize("kind", sorted(steps.kinds()))
def test_the_step_kinds_table_lists_each_kind(kind):
    assert kind in _table_rows("Step kinds")


@pytest.mark.parametrize("type_", sorted(triggers.types()))
def test_the_triggers_table_lists_each_type(type_):
    assert type_ in _table_rows("Triggers")
