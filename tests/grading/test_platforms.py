"""Where the grading sandbox cannot be made (macOS, Linux without bubblewrap or user namespaces).

The sandbox is bubblewrap, which only Linux has. These tests put a ``bwrap`` that cannot make a
sandbox first on ``PATH``, as on a machine without user namespaces, and run the real commands:

- ``nbgrader autograde posenc`` with the course's settings (``ResilientExecute.sandbox =
  "require"``) stops before grading anything, exits non-zero and says what to do;
- with ``ResilientExecute.sandbox = "off"`` (in ``nbgrader_config.py`` or on the command line) the
  class is graded, with the same scores;
- ``posenc-check`` grades a learner's own notebook without the sandbox, and says so.

macOS itself is not on this machine: what differs there (no ``bwrap`` at all, ``sys.platform`` is
``darwin``, the memory limit may be refused) is tested on the functions that decide it.
"""

import os
import re
import resource
import sqlite3
import stat
import subprocess
import sys
import time

import pytest

from hardened_grading.sandbox import limits
from hardened_grading.sandbox import probe as sandbox_probe
from posenc_course import report
from posenc_course.course import generate, nbgrader_env, new_course
from posenc_course.submissions import make_submission, reference_answers, write_submission

from ..helpers import children
from ..helpers.children import run_nbgrader
from ..helpers.grading import MAX_POINTS

ADVICE = "c.ResilientExecute.sandbox = 'off'"


@pytest.fixture(scope="module")
def no_sandbox(tmp_path_factory):
    """A PATH whose ``bwrap`` fails as it does without unprivileged user namespaces."""
    folder = tmp_path_factory.mktemp("fake-bwrap")
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return nbgrader_env(PATH=f"{folder}{os.pathsep}{nbgrader_env()['PATH']}")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course with two submissions: the reference answers and the blank release."""
    course = new_course(tmp_path_factory.mktemp("course"))
    release = generate(course)
    answers = reference_answers(course / "source" / "posenc" / "exercises.ipynb")
    write_submission(make_submission(answers, release_notebook=release), course / "submitted", "reference")
    write_submission(make_submission(release_notebook=release), course / "submitted", "blank")
    return course


def graded_students(course):
    with sqlite3.connect(course / "gradebook.db") as db:
        return {name for (name,) in db.execute(
            "SELECT student.id FROM submitted_assignment JOIN student ON student.id = submitted_assignment.student_id")}


@pytest.mark.parametrize("args", [(), ("--ResilientExecute.sandbox=require",)], ids=["course setting", "command line"])
def test_grading_a_class_without_the_sandbox_stops_at_once_and_says_what_to_do(course, no_sandbox, args):
    result = run_nbgrader(course, "autograde", "posenc", *args, env=no_sandbox)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "stopped before grading anything" in output and "No permissions to create new namespace" in output, output
    assert ADVICE in output and "apt-get install bubblewrap" in output, output
    assert "Traceback" not in output, output
    assert not (course / "autograded" / "reference").exists() and not graded_students(course)


def test_each_submission_refuses_too_when_the_run_was_not_stopped(course, no_sandbox):
    """With nbgrader's plain exporter in place of the course's, nothing stops the run up front:
    every submission still refuses to run unsandboxed, with the same advice."""
    result = run_nbgrader(course, "autograde", "posenc", "--Autograde.exporter_class=nbconvert.exporters.NotebookExporter",
                          env=no_sandbox)
    assert result.returncode != 0
    assert result.stdout.count("SandboxUnavailable") + result.stderr.count("SandboxUnavailable") >= 2
    assert ADVICE in result.stdout + result.stderr
    assert not list(course.glob("autograded/*/posenc/exercises.ipynb"))


@pytest.mark.parametrize("how", ["command line", "nbgrader_config.py"])
def test_with_the_sandbox_off_the_class_is_graded_as_usual(course, no_sandbox, how):
    config = course / "nbgrader_config.py"
    original = config.read_text()
    try:
        if how == "command line":
            result = run_nbgrader(course, "autograde", "posenc", "--force", "--ResilientExecute.sandbox=off", env=no_sandbox)
        else:
            config.write_text(original + "\nc.ResilientExecute.sandbox = 'off'\n")
            result = run_nbgrader(course, "autograde", "posenc", "--force", env=no_sandbox)
    finally:
        config.write_text(original)
    assert result.returncode == 0, result.stdout + result.stderr
    scores = report.exercise_scores(course / "gradebook.db")
    assert {ex: s for ex, (s, _) in scores["reference"].items()} == MAX_POINTS
    assert {ex: s for ex, (s, _) in scores["blank"].items()} == dict.fromkeys(MAX_POINTS, 0)
    # said once for the run (a class of two here), with what it means
    assert (result.stdout + result.stderr).count(sandbox_probe.UNSANDBOXED_MEANS) == 1, result.stderr[-2000:]


def test_posenc_check_grades_ones_own_notebook_without_the_sandbox(course, no_sandbox, tmp_path):
    notebook = tmp_path / "mine.ipynb"
    notebook.write_text((course / "submitted" / "reference" / "posenc" / "exercises.ipynb").read_text())
    result = children.run([os.path.join(os.path.dirname(sys.executable), "posenc-check"), str(notebook)],
                          capture_output=True, text=True, env=no_sandbox, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    total = sum(MAX_POINTS.values())
    assert re.search(rf"^total\s+{total:g}/{total:g}$", result.stdout, re.M), result.stdout
    assert "cannot make a sandbox here" in result.stderr and "runs without it" in result.stderr, result.stderr


def test_the_kernel_refuses_to_start_unsandboxed_when_required(no_sandbox):
    started = subprocess.run([sys.executable, "-m", "hardened_grading.sandbox.launcher", "--sandbox=require", "-f", "unused.json"],
                             capture_output=True, text=True, env=no_sandbox, timeout=60)
    assert started.returncode != 0
    assert "not started" in started.stderr and ADVICE in started.stderr, started.stderr


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_other_platforms_are_told_that_the_sandbox_is_linux_only(monkeypatch, platform):
    monkeypatch.setattr(sys, "platform", platform)
    assert sandbox_probe.sandbox_problem() == f"bubblewrap, the grading sandbox, exists only on Linux, and this is {platform}"


def test_a_memory_limit_the_platform_refuses_is_reported_not_fatal(monkeypatch):
    def refuse(*args):
        raise ValueError("current limit exceeds maximum limit")

    monkeypatch.setattr(resource, "setrlimit", refuse)
    assert "could not be set on this platform (current limit exceeds maximum limit)" in limits.limit_memory(3072)


def test_the_sandbox_works_on_this_linux_machine():
    """CI's machine is Linux with bubblewrap: the grading tests there run sandboxed."""
    assert sys.platform.startswith("linux")
    assert sandbox_probe.sandbox_problem() is None, sandbox_probe.sandbox_problem()


@pytest.mark.skipif(sandbox_probe.sandbox_problem() is not None, reason="no bubblewrap sandbox here")
def test_a_slow_sandbox_probe_is_a_busy_machine_not_a_missing_sandbox(monkeypatch, capfd):
    """A probe that runs over its time (here: one that sleeps, given 1 s) is killed, leaves nothing running,
    and is not a reason to refuse: the grader goes on with the sandbox and says the probe was slow."""
    marker = f"posenc-slow-probe-{os.getpid()}"
    monkeypatch.setattr(sandbox_probe, "_TRIAL", sandbox_probe._TRIAL[:-1] + ["sh", "-c", f"sleep 600 # {marker}"])

    def probes():
        return [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline(pid).count(marker)]

    assert sandbox_probe.sandbox_problem(seconds=1) is None
    assert "the sandbox probe took over 1 s" in capfd.readouterr().err
    deadline = time.monotonic() + 10  # the killed bwrap's child gets SIGKILL from --die-with-parent: at once
    while probes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not probes(), "the killed probe left a process behind"


def _cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline").read()
    except OSError:
        return ""


def test_a_sandbox_that_fails_its_probe_is_still_refused(monkeypatch):
    """The other side: a probe that ends with an error (bwrap refuses an option) is a missing sandbox."""
    monkeypatch.setattr(sandbox_probe, "_TRIAL", ["bwrap", "--no-such-option", "true"])
    if sandbox_probe.shutil.which("bwrap") is None:
        pytest.skip("no bubblewrap here")
    assert "bubblewrap is installed but cannot make a sandbox here" in sandbox_probe.sandbox_problem()


def test_grading_a_class_in_parallel_without_the_sandbox_stops_at_once_too(course, no_sandbox):
    """posenc-grade checks the sandbox before starting a worker, says the same, and touches nothing."""
    def state():
        files = {str(p): p.stat().st_mtime_ns for p in (course / "autograded").rglob("*")} \
            if (course / "autograded").exists() else {}
        return files, graded_students(course) if (course / "gradebook.db").exists() else set()

    before = state()
    result = children.run([sys.executable, "-m", "posenc_course.instructor.grade", "--jobs", "2"], cwd=course,
                          env=no_sandbox, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stdout + result.stderr
    output = result.stderr
    assert "stopped before grading anything" in output and "No permissions to create new namespace" in output, output
    assert ADVICE in output and "Traceback" not in output, output
    assert state() == before
