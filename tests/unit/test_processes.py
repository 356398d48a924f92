"""hardened_grading.processes.ended: what a killed grader left is removed once its process has ended, zombies too."""

import os
import shutil
import subprocess
import sys

import pytest

from hardened_grading.processes import ended

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def exited_unreaped(command=("true",)):
    """A child that has exited and that nobody has reaped yet (a zombie), waited for without reaping it."""
    child = subprocess.Popen(list(command))
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # returns once it has exited; it stays a zombie
    return child


def test_a_live_process_has_not_ended():
    assert not ended(os.getpid()) and not ended(str(os.getpid()))


def test_a_reaped_process_has_ended():
    child = subprocess.Popen(["true"])
    child.wait()
    assert ended(child.pid)


def test_a_zombie_has_ended():
    """A killed grader's workers are zombies until a reaper comes to them: they hold nothing any more."""
    child = exited_unreaped()
    assert os.path.exists(f"/proc/{child.pid}"), "the child was reaped: this test proves nothing"
    try:
        assert ended(child.pid)
    finally:
        child.wait()


def test_a_live_process_named_like_a_zombie_has_not_ended(tmp_path):
    """The process's name comes before its state in /proc/PID/stat, and may hold ") Z"."""
    program = tmp_path / "x) Z ("
    shutil.copy(shutil.which("sleep"), program)
    child = subprocess.Popen([str(program), "60"])
    try:
        assert not ended(child.pid)
    finally:
        child.kill()
        child.wait()
