"""`make run`'s process manager (edge/procfile.py), with small stand-in processes instead of the real four."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.test_settings import ROOT

# A main process with one child, as the Celery worker has its pool: the child says what stopped it.
WITH_A_CHILD = textwrap.dedent("""
    import os, signal, sys
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, lambda *_: (print("child got SIGTERM", flush=True), os._exit(1)))
        signal.signal(signal.SIGUSR1, lambda *_: (print("child stopped by its parent", flush=True), os._exit(0)))
        print("ready", flush=True)
        while True:
            signal.pause()
    def stop(*_):
        os.kill(child, signal.SIGUSR1)
        os.waitpid(child, 0)
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    while True:
        signal.pause()
""")
IGNORES_SIGTERM = (
    "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
    "[signal.pause() for _ in iter(int, 1)]"
)
WAITS = "import signal; print('ready', flush=True); signal.pause()"
ENDS = "print('ready', flush=True)"


def _start(tmp_path, stop_seconds: int = 30, **scripts: str) -> subprocess.Popen:
    lines = []
    for name, script in scripts.items():
        (tmp_path / f"{name}.py").write_text(script)
        lines.append(f"{name}: {sys.executable} {tmp_path / name}.py")
    (tmp_path / "Procfile").write_text("\n".join(lines) + "\n")
    environment = {**os.environ, "PROCFILE_STOP_SECONDS": str(stop_seconds)}
    return subprocess.Popen(
        [sys.executable, "-m", "edge.procfile", str(tmp_path / "Procfile")],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _read_until(runner: subprocess.Popen, count: int, marker: str = "| ready") -> str:
    seen, text = 0, ""
    while seen < count:
        line = runner.stdout.readline()
        assert line, f"the runner ended before {count} lines with {marker!r}:\n{text}"
        text += line
        seen += marker in line
    return text


def _finish(runner: subprocess.Popen) -> tuple[int, str]:
    try:
        rest, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    return runner.returncode, rest


def test_ctrl_c_stops_each_main_process_which_stops_its_own_children(tmp_path):
    runner = _start(tmp_path, pool=WITH_A_CHILD, other=WAITS)
    _read_until(runner, 2)
    runner.send_signal(signal.SIGINT)
    status, output = _finish(runner)
    assert status == 0
    assert "child stopped by its parent" in output
    assert "child got SIGTERM" not in output
    assert "pool stopped (rc=0)" in output
    assert "other stopped (rc=-15)" in output
    assert "SIGKILL" not in output


def test_a_process_still_running_after_the_stop_time_is_killed_and_the_status_says_so(tmp_path):
    runner = _start(tmp_path, stop_seconds=1, stubborn=IGNORES_SIGTERM)
    _read_until(runner, 1)
    runner.send_signal(signal.SIGTERM)
    status, output = _finish(runner)
    assert "stubborn still running after 1 s: SIGKILL to its group" in output
    assert "stubborn stopped (rc=-9)" in output
    assert status == 1


def test_a_second_ctrl_c_kills_at_once(tmp_path):
    runner = _start(tmp_path, stubborn=IGNORES_SIGTERM)
    _read_until(runner, 1)
    runner.send_signal(signal.SIGINT)
    _read_until(runner, 1, "stopping stubborn")
    runner.send_signal(signal.SIGINT)
    status, output = _finish(runner)
    assert "stubborn still running after a second signal: SIGKILL to its group" in output
    assert status == 1


def test_when_one_process_ends_the_others_are_stopped_and_the_status_is_1(tmp_path):
    runner = _start(tmp_path, ends=ENDS, waits=WAITS)
    status, output = _finish(runner)
    assert "ends stopped by itself (rc=0)" in output
    assert "stopping waits (SIGTERM" in output
    assert status == 1


@pytest.mark.parametrize("line", ["no separator here", "two words: echo", "name:   "])
def test_a_malformed_procfile_line_is_refused_with_its_number(tmp_path, line):
    (tmp_path / "Procfile").write_text(f"# comment\n\nweb: echo\n{line}\n")
    result = subprocess.run(
        [sys.executable, "-m", "edge.procfile", str(tmp_path / "Procfile")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    assert f"Procfile:4: expected `name: command`, found {line.strip()!r}" in result.stderr


SAYS_LATER = "import signal, time; time.sleep(1); print('listening', flush=True); signal.pause()"
PRINTS_ITS_ENVIRONMENT = (
    "import os, signal; print('banner in environment:', 'PROCFILE_BANNER' in os.environ, flush=True); signal.pause()"
)


def _with_banner(tmp_path, ready: str, banner: str) -> subprocess.Popen:
    """The manager running tmp_path's Procfile with one --ready line and PROCFILE_BANNER set."""
    return subprocess.Popen(
        [sys.executable, "-m", "edge.procfile", "--ready", ready, str(tmp_path / "Procfile")],
        cwd=ROOT,
        env={**os.environ, "PROCFILE_BANNER": banner},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def test_the_banner_comes_once_every_process_printed_its_ready_line(tmp_path):
    (tmp_path / "slow.py").write_text(SAYS_LATER)
    (tmp_path / "env.py").write_text(PRINTS_ITS_ENVIRONMENT)
    (tmp_path / "Procfile").write_text(
        f"slow: {sys.executable} {tmp_path / 'slow.py'}\nenv: {sys.executable} {tmp_path / 'env.py'}\n"
    )
    runner = _with_banner(tmp_path, "slow=^listen", "Visit the service\nCtrl-C stops it\n")
    output = _read_until(runner, 1, "Ctrl-C stops it")
    runner.send_signal(signal.SIGINT)
    _, rest = _finish(runner)
    assert output.index("| listening") < output.index("\nVisit the service\nCtrl-C stops it\n")
    assert "banner in environment: False" in output
    assert "Visit the service" not in rest


TWO_WORKERS = (
    "import signal, time; print('listening 1', flush=True); time.sleep(1); print('listening 2', flush=True); "
    "signal.pause()"
)


def test_the_banner_waits_for_the_ready_line_of_every_worker_when_asked_for_n(tmp_path):
    (tmp_path / "master.py").write_text(TWO_WORKERS)
    (tmp_path / "Procfile").write_text(f"master: {sys.executable} {tmp_path / 'master.py'}\n")
    runner = _with_banner(tmp_path, "master*2=^listening", "Ctrl-C stops it\n")
    output = _read_until(runner, 1, "Ctrl-C stops it")
    runner.send_signal(signal.SIGINT)
    _finish(runner)
    assert output.index("| listening 2") < output.index("\nCtrl-C stops it\n")


def test_a_ready_count_that_is_no_number_is_refused():
    for spec in ("web*0=x", "web*two=x", "web*=x"):  # web is a line of the Procfile: only the count is wrong
        result = subprocess.run(
            [sys.executable, "-m", "edge.procfile", "--ready", spec, "Procfile"], cwd=ROOT, capture_output=True
        )
        assert result.returncode != 0 and b"expected NAME[*N]=PATTERN" in result.stderr, spec


def test_a_sigint_sent_to_make_alone_stops_every_process(tmp_path):
    """As an IDE stops what it started: make, sent SIGINT, tells its children nothing and waits for them."""
    (tmp_path / "pool.py").write_text(WITH_A_CHILD)
    (tmp_path / "Procfile").write_text(f"pool: {sys.executable} {tmp_path / 'pool.py'}\n")
    (tmp_path / "Makefile").write_text(
        f"run:\n\t@cd {ROOT} && exec {sys.executable} -m edge.procfile --under-make {tmp_path / 'Procfile'}\n"
    )
    make = subprocess.Popen(
        ["make", "-f", str(tmp_path / "Makefile"), "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _read_until(make, 1)
    make.send_signal(signal.SIGINT)
    status, output = _finish(make)
    assert "SIGINT sent to make: stopping every process" in output
    assert "child stopped by its parent" in output
    assert "pool stopped (rc=0)" in output
    assert status == -signal.SIGINT  # make ends as the signal asked, once its child has
