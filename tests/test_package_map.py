"""The package map of docs/architecture.md holds: each package imports, at module level, only those it builds on."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = {
    "accounts",
    "automations",
    "catalog",
    "config",
    "connections",
    "connectors",
    "edge",
    "hooks",
    "interfaces",
    "mcp_auth",
    "mcp_server",
    "overrides",
    "publickeys",
}


def module_level_imports(package: str) -> dict[str, set[str]]:
    """Each module of the package (tests and migrations aside): the other project packages it imports at module
    level."""
    found = {}
    for path in (ROOT / package).rglob("*.py"):
        relative = path.relative_to(ROOT)
        if "tests" in relative.parts or "migrations" in relative.parts:
            continue
        names = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        found[str(relative)] = (names & PROJECT) - {package}
    return found


def test_config_builds_on_edge_and_overrides_but_for_its_url_routes_and_the_hooks_entry_point():
    for module, names in module_level_imports("config").items():
        allowed = {"edge", "overrides"}
        if module.startswith("config/urls/"):
            allowed |= {"accounts"}  # the views a route names
        if module == "config/asgi.py":
            allowed |= {"hooks"}  # the hooks process's entry point composes its handler with Django
        assert names <= allowed, f"{module} imports {sorted(names - allowed)}"


def test_the_lower_packages_import_nothing_above_them():
    below = {
        "overrides": set(),
        "publickeys": {"edge"},
        "automations": {"publickeys", "edge", "overrides"},  # the apps on top through signals
        "catalog": {"automations", "edge"},
        "connectors": {"automations"},
    }
    for package, allowed in below.items():
        for module, names in module_level_imports(package).items():
            assert names <= allowed, f"{module} imports {sorted(names - allowed)}"
