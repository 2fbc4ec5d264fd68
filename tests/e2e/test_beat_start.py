"""Beat on a fresh deploy: PostgreSQL and Redis, FLOWGATE_VAR_DIR not made yet, started as in the Procfile."""

import os
import signal
import subprocess
import sys

from tests.e2e.stack import END_TO_END, ROOT, Stack, wait_until

pytestmark = END_TO_END


def test_beat_starts_and_keeps_sending_on_a_fresh_deploy(tmp_path):
    var = tmp_path / "fresh" / "var"
    environment = {
        **Stack(tmp_path).env,
        "FLOWGATE_VAR_DIR": str(var),
        "DELIVERY_SWEEP_SECONDS": "1",
        "RUN_SWEEP_SECONDS": "1",  # sent twice within seconds, not the default's 15 s apart
        "LOG_LEVEL": "INFO",
    }
    log_path = tmp_path / "beat.log"
    with open(log_path, "wb") as log:
        beat = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel", "INFO"],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def sent_twice() -> bool:
            assert beat.poll() is None, f"beat exited:\n{log_path.read_text(errors='replace')}"
            return log_path.read_text(errors="replace").count("Sending due task automations-sweep-runs") >= 2

        wait_until(sent_twice, 60, 0.2, "beat to send the sweeper twice")
        assert "beat: Starting..." in log_path.read_text(errors="replace")
        assert any(var.glob("celerybeat-schedule*"))
    finally:
        os.killpg(beat.pid, signal.SIGTERM)
        beat.wait(timeout=30)
