"""docs/security.md proves each claim by naming tests: every `path/to/test_file.py::test_name` it names must exist.

A renamed or deleted test then breaks this test, not silently the page's proof. Read from the files alone (no
import, no database), so it runs in a blink.
"""

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "security.md"
REFERENCE = re.compile(r"([A-Za-z0-9_./-]+\.py)::(test_[A-Za-z0-9_]+)")
FEWEST = 40


def references() -> list[tuple[str, str]]:
    return REFERENCE.findall(DOC.read_text(encoding="utf-8"))


@functools.cache
def defined_tests(path: str) -> frozenset[str]:
    """The test functions a test file defines, at its top level or in its classes."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_")
    )


def test_every_reference_names_a_test_file_of_this_repository():
    missing = sorted(
        {
            path
            for path, _ in references()
            if not (ROOT / path).resolve().is_relative_to(ROOT) or not (ROOT / path).is_file()
        }
    )
    assert not missing, f"docs/security.md names test files that do not exist: {missing}"


def test_every_reference_names_a_test_function_its_file_defines():
    missing = sorted(
        f"{path}::{name}"
        for path, name in set(references())
        if (ROOT / path).is_file() and name not in defined_tests(path)
    )
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"


def test_the_doc_proves_its_claims_with_enough_tests():
    distinct = set(references())
    assert len(distinct) >= FEWEST, f"docs/security.md names {len(distinct)} tests, fewer than {FEWEST}"


def test_the_reference_pattern_reads_the_forms_the_doc_uses():
    text = "Proved by: `hooks/tests/test_receive.py::test_a`, `tests/test_hosts.py::test_b_c`; not tests/x.py::helper"
    assert REFERENCE.findall(text) == [("hooks/tests/test_receive.py", "test_a"), ("tests/test_hosts.py", "test_b_c")]


def test_the_readme_and_the_architecture_notes_link_the_doc():
    for page in ("README.md", "docs/architecture.md"):
        assert "docs/security.md" in (ROOT / page).read_text(encoding="utf-8"), page
