"""The suite's own check that a test run leaves nothing running (tests/conftest.py, pytest_sessionfinish): a run
whose test leaves a process behind fails, and names it; a run whose processes all end passes."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import RUN_MARKER

LEAVES = '''
import subprocess, sys

def test_starts_a_process():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(%s)  # left-behind-probe"], start_new_session=True)
'''


def run_suite(folder, seconds, grace):
    (folder / "unit").mkdir()  # a test module in no known folder is refused (tests/conftest.py)
    (folder / "unit" / "test_leave.py").write_text(LEAVES % seconds)
    shutil.copy(Path(__file__).parents[1] / "conftest.py", folder / "conftest.py")
    env = {k: v for k, v in os.environ.items() if k not in (RUN_MARKER, "POSENC_RECORD_RUN")}  # its own run, not recorded
    env["POSENC_LEFT_BEHIND_GRACE"] = str(grace)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-o", "addopts=", str(folder)], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_run_that_leaves_a_process_running_fails_and_names_it(tmp_path):
    try:
        result = run_suite(tmp_path, 600, grace=2)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "1 passed" in result.stdout
        assert "1 process(es) started by this test run were still running" in result.stderr, result.stderr
        assert "left-behind-probe" in result.stderr
    finally:
        for line in subprocess.run(["pgrep", "-f", "left-behind-probe"], capture_output=True, text=True).stdout.split():
            os.kill(int(line), signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_run_whose_processes_end_within_the_grace_passes(tmp_path):
    result = run_suite(tmp_path, 0.5, grace=120)  # ends in half a second: the grace is room for a loaded machine
    assert result.returncode == 0 and "still running" not in result.stderr, result.stdout + result.stderr
