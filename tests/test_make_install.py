"""`make install` finds a Python 3.11 or says what to install, and makes a broken .venv anew by itself.

Run in a scratch directory against stand-in interpreters: shell scripts that
answer the version check as a chosen Python would, make a stand-in venv on
`-m venv`, and log what they are asked, so no real venv is made or installed.
"""

import shutil
import subprocess
import textwrap

import pytest

from tests.test_settings import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")

# $1.. are a Python's arguments. The version check is the only `-c` that imports nothing but sys.
INTERPRETER = textwrap.dedent("""\
    #!/bin/sh
    echo "$0 $*" >> "{log}"
    case "$1 $2" in
      "-c "*django*) exit {has_django} ;;
      "-c "*) exit {is_311} ;;
      "-m venv") mkdir -p "$3/bin" && cp "{venv_python}" "$3/bin/python" && exit 0 ;;
      "-m pip") exit 0 ;;
    esac
    exit 1
""")


def _interpreter(path, log, *, is_311: bool, has_django: bool = False, venv_python=None):
    path.write_text(
        INTERPRETER.format(
            log=log,
            is_311=0 if is_311 else 1,
            has_django=0 if has_django else 1,
            venv_python=venv_python or "/nonexistent",
        )
    )
    path.chmod(0o755)
    return path


@pytest.fixture
def scratch(tmp_path):
    """A project directory with pyproject.toml, a bin/ for stand-ins, and the log they write."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "pyproject.toml", project)
    (tmp_path / "bin").mkdir()
    return project, tmp_path / "bin", tmp_path / "calls.log"


def _make_install(project, bin_dir, **variables) -> subprocess.CompletedProcess:
    # Only the stand-ins and the basic tools (sh, rm, mkdir, cp, touch, cksum) are on PATH.
    tools = bin_dir.parent / "tools"
    tools.mkdir(exist_ok=True)
    for tool in ("sh", "rm", "mkdir", "cp", "touch", "cksum", "cut", "cat", "make", "expand", "sed"):
        if not (tools / tool).exists():
            (tools / tool).symlink_to(shutil.which(tool))
    environment = {"PATH": f"{bin_dir}:{tools}", "HOME": str(bin_dir.parent)}
    command = [
        "make",
        "-f",
        str(ROOT / "Makefile"),
        "-C",
        str(project),
        "install",
        *(f"{name}={value}" for name, value in variables.items()),
    ]
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=60)


def test_without_a_python_311_it_says_what_to_install_and_leaves_no_venv(scratch):
    project, bin_dir, log = scratch
    _interpreter(bin_dir / "python3", log, is_311=False)
    result = _make_install(project, bin_dir)
    assert result.returncode != 0
    assert "Flowgate needs Python 3.11. Install it (Debian and Ubuntu: apt install python3.11" in result.stderr
    assert "make run PYTHON=/path/to/python3.11" in result.stderr
    assert not (project / ".venv").exists()


def test_it_takes_python311_from_the_path_over_another_python3(scratch):
    project, bin_dir, log = scratch
    venv_python = _interpreter(bin_dir.parent / "venv-python", log, is_311=True, has_django=True)
    _interpreter(bin_dir / "python3", log, is_311=False)
    chosen = _interpreter(bin_dir / "python3.11", log, is_311=True, venv_python=venv_python)
    result = _make_install(project, bin_dir)
    assert result.returncode == 0, result.stderr
    assert f"making .venv with {chosen}" in result.stdout
    assert f"{chosen} -m venv .venv" in log.read_text()
    assert list(project.glob(".venv/.installed-*"))


def test_a_python_named_that_is_not_311_is_refused_by_name(scratch):
    project, bin_dir, log = scratch
    other = _interpreter(bin_dir / "python3.12", log, is_311=False)
    _interpreter(bin_dir / "python3.11", log, is_311=True)
    result = _make_install(project, bin_dir, PYTHON=other)
    assert result.returncode != 0
    assert f"PYTHON={other} is not Python 3.11." in result.stderr
    assert not (project / ".venv").exists()


def test_a_venv_of_another_python_is_made_anew_by_itself(scratch):
    project, bin_dir, log = scratch
    venv_python = _interpreter(bin_dir.parent / "venv-python", log, is_311=True, has_django=True)
    _interpreter(bin_dir / "python3.11", log, is_311=True, venv_python=venv_python)
    # What a first `make run` with Python 3.12 left behind: a venv, nothing installed, no stamp.
    (project / ".venv" / "bin").mkdir(parents=True)
    _interpreter(project / ".venv" / "bin" / "python", log, is_311=False)
    result = _make_install(project, bin_dir)
    assert result.returncode == 0, result.stderr
    assert ".venv is not a Python 3.11 environment: making it anew with" in result.stdout
    assert (project / ".venv" / "bin" / "python").read_text() == venv_python.read_text()
    assert list(project.glob(".venv/.installed-*"))


def test_an_installed_venv_that_lost_django_is_installed_again(scratch):
    project, bin_dir, log = scratch
    broken = _interpreter(bin_dir.parent / "broken", log, is_311=True, has_django=False)
    _make_install(project, bin_dir, PYTHON=_interpreter(bin_dir / "python3.11", log, is_311=True, venv_python=broken))
    assert list(project.glob(".venv/.installed-*"))
    log.write_text("")
    again = _make_install(project, bin_dir)
    assert again.returncode == 0, again.stderr
    assert "-m pip install --quiet .[dev]" in log.read_text()
    assert "-m venv" not in log.read_text()


def test_a_second_install_of_a_sound_venv_does_nothing(scratch):
    project, bin_dir, log = scratch
    venv_python = _interpreter(bin_dir.parent / "venv-python", log, is_311=True, has_django=True)
    _make_install(
        project, bin_dir, PYTHON=_interpreter(bin_dir / "python3.11", log, is_311=True, venv_python=venv_python)
    )
    log.write_text("")
    again = _make_install(project, bin_dir)
    assert again.returncode == 0, again.stderr
    assert "pip" not in log.read_text()
