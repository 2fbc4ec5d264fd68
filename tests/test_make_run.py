"""`make run` refuses to serve DEBUG pages, or a listen-only address as its URL, beyond this machine.

The database named here refuses connections (nothing listens on port 9), so
even a `make run` that failed to refuse would stop at its first migration
instead of serving anything.
"""
import os
import shutil
import subprocess

import pytest

from tests.test_settings import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make_run(tmp_path, **variables) -> subprocess.CompletedProcess:
    unset = ("DEBUG", "SECRET_KEY", "BASE_URL", "HOOKS_URL", "MCP_URL")
    keep = {k: v for k, v in os.environ.items() if k not in unset}
    environment = {
        **keep, "FLOWGATE_VAR_DIR": str(tmp_path), "DATABASE_URL": "postgres://nobody@127.0.0.1:9/none",
        "REDIS_URL": "redis://127.0.0.1:9/0", **variables,
    }
    # -o install: use the environment as it is rather than install into it.
    return subprocess.run(["make", "-o", "install", "run"], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize(("name", "bind"), [("WEB_BIND", "0.0.0.0:8000"), ("HOOKS_BIND", "0.0.0.0:8001")])
def test_make_run_refuses_debug_on_a_public_bind(tmp_path, name, bind):
    result = make_run(tmp_path, **{name: bind})
    assert result.returncode != 0
    assert f"DEBUG is on and {name}={bind} accepts connections from other machines" in result.stderr
    assert "set DEBUG=0 and SECRET_KEY" in result.stderr


def test_make_run_on_a_public_bind_needs_the_url_clients_use(tmp_path):
    result = make_run(tmp_path, DEBUG="0", SECRET_KEY="x" * 50, WEB_BIND="0.0.0.0:8000")
    assert result.returncode != 0
    assert "BASE_URL=http://0.0.0.0:8000 names 0.0.0.0, an address to listen on" in result.stderr
