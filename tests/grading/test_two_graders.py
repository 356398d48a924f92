"""Two grading runs at once, in one course, never spoil each other's work (issue 43).

A run that starts removes what a run that ended part-way left half-graded (``remove_unfinished``), and only
that: a live run's folders are left alone, whichever the assignment and whichever the command (``nbgrader
autograde`` or ``posenc-grade``'s workers). Two runs that come to the same submission take turns.

Real commands in a temporary course with the three assignments. The overlap is made certain by events, not by
sleeping: a *gated* submission (the reference answers, after a first cell that waits for a file ``gate-open``
in its folder, and says it waits by making ``gate-waiting``) holds its run in the middle of grading, with a
half-graded folder, until the test opens the gate.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from hardened_grading.cells import is_answer_cell
from hardened_grading.hooks.submission import GRADED_MARKER
from posenc_course import report
from posenc_course.course import generate, nbgrader_env, new_course
from posenc_course.layout import ADVANCED, ASSIGNMENT, CURRENT, GRADED, NOTEBOOK, points_per_exercise
from posenc_course.submissions import make_submission, reference_answers, write_submission

from ..helpers import children
from ..helpers.grading import assert_scores

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="grades in the sandbox")

#: The first lines of a gated submission's first answer cell: it waits in its folder (the kernel's working folder)
#: for the test to open the gate.
GATE = ('import os as _os, time as _time\nopen("gate-waiting", "w").close()\n'
        'while not _os.path.exists("gate-open"):\n    _time.sleep(0.05)\n')
#: Seconds any one wait of these tests may take, on a machine loaded by other tests.
PATIENCE = 600


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A course with the three assignments generated once; each test grades in a copy. Its cells may wait for a
    gate for as long as a test takes (``Execute.timeout`` and ``submission_seconds``)."""
    course = new_course(tmp_path_factory.mktemp("two-graders") / "course")
    for assignment in GRADED:
        generate(course, assignment)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write("\nc.Execute.timeout = 1800\nc.ResilientExecute.submission_seconds = 3600\n")
    return course


@pytest.fixture
def course(template, tmp_path):
    copy = tmp_path / "course"
    shutil.copytree(template, copy)
    return copy


def submit(course, student, assignment, gated=False):
    """Submit the reference answers of `assignment` for `student`; `gated`: behind the gate (see above)."""
    answers = reference_answers(course / "source" / assignment / NOTEBOOK)
    notebook = make_submission(answers, release_notebook=course / "release" / assignment / NOTEBOOK)
    if gated:
        first = next(cell for cell in notebook.cells if is_answer_cell(cell) and cell.cell_type == "code")
        first.source = GATE + "\n" + first.source
    write_submission(notebook, course / "submitted", student, assignment)


def start(course, name, *command):
    """Start `command` (``nbgrader ...`` or ``posenc-grade ...``, with this Python) in `course`, in a process group
    of its own, its output in ``NAME.log`` beside the course."""
    program = ["-m", "nbgrader"] if command[0] == "nbgrader" else ["-m", "posenc_course.instructor.grade"]
    log = open(course.parent / f"{name}.log", "w")
    run = children.popen([sys.executable, *program, *command[1:]], cwd=course, env=nbgrader_env(),
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    run.name, run.log = name, Path(log.name)
    log.close()
    return run


def output(run):
    return run.log.read_text(errors="replace")


def wait_for(what, condition, runs=()):
    """Wait until `condition()` holds; fail, saying `what`, if one of `runs` ends first or it takes too long."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        for run in runs:
            assert run.poll() is None, f"{run.name} ended while waiting for {what}:\n{output(run)[-4000:]}"
        assert time.monotonic() < deadline, f"no {what} in {PATIENCE} s"
        time.sleep(0.05)


def at_gate(course, student, assignment, run):
    """Wait until `run`'s kernel is at `student`'s gate in `assignment`; return the graded folder."""
    folder = course / "autograded" / student / assignment
    wait_for(f"{run.name} at {student}'s gate in {assignment}", (folder / "gate-waiting").exists, [run])
    return folder


def finished(run, code=0):
    assert run.wait(timeout=PATIENCE) == code, f"{run.name} exited with {run.returncode}:\n{output(run)[-6000:]}"
    return output(run)


def assert_full_marks(course, graded):
    """Every ``(student, assignment)`` of `graded` scores full marks in every exercise, read from the gradebook."""
    for assignment in {assignment for _, assignment in graded}:
        scores = report.exercise_scores(course / "gradebook.db", assignment)
        maxima = points_per_exercise(nbformat.read(course / "source" / assignment / NOTEBOOK, as_version=4))
        for student in (student for student, of in graded if of == assignment):
            assert student in scores, f"{student} has no grade in {assignment}"
            assert_scores(scores, student, {}, maxima)


@pytest.fixture
def runs():
    """The runs a test starts: any still running at its end (a failed test) is killed with its process group."""
    started = []
    yield started
    for run in started:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()


def test_a_live_runs_folders_are_kept_and_a_killed_runs_are_graded_again(course, runs):
    """Four runs of three assignments, all at once for one student, ``busy-student``:

    - A1, ``nbgrader autograde posenc-current``, and A2, ``posenc-grade posenc-advanced``, each held at
      busy-student's gate, half-way through grading;
    - K, ``posenc-grade posenc`` of busy-student and ``killed-student``: its clean-up (limited to its students)
      keeps A1's and A2's folders; it grades busy-student, is held at killed-student's gate, and is killed there
      (SIGKILL, its workers with it), leaving killed-student's folder half-graded;
    - C, ``nbgrader autograde posenc``: its clean-up (every student) removes the killed run's folder and keeps A1's
      and A2's; it grades killed-student and skips busy-student.

    Then the gates open: A1 and A2 finish, and every submission scores full marks."""
    submit(course, "busy-student", CURRENT, gated=True)
    submit(course, "busy-student", ADVANCED, gated=True)
    submit(course, "busy-student", ASSIGNMENT)
    submit(course, "killed-student", ASSIGNMENT, gated=True)

    runs.append(a1 := start(course, "A1", "nbgrader", "autograde", CURRENT))
    current = at_gate(course, "busy-student", CURRENT, a1)
    runs.append(a2 := start(course, "A2", "posenc-grade", ADVANCED, "--jobs", "1"))
    advanced = at_gate(course, "busy-student", ADVANCED, a2)
    assert current.exists(), f"A2 removed A1's live folder:\n{output(a2)[-3000:]}"

    runs.append(k := start(course, "K", "posenc-grade", ASSIGNMENT, "--jobs", "1"))
    killed = at_gate(course, "killed-student", ASSIGNMENT, k)
    assert current.exists() and advanced.exists(), f"K removed a live run's folder:\n{output(k)[-3000:]}"
    os.killpg(k.pid, signal.SIGKILL)  # the command and its worker; its kernel ends with the worker
    k.wait()
    assert any(killed.glob("*.ipynb")) and not (killed / GRADED_MARKER).exists(), "not half-graded"
    (course / "submitted" / "killed-student" / ASSIGNMENT / "gate-open").touch()  # graded again: no wait

    runs.append(c := start(course, "C", "nbgrader", "autograde", ASSIGNMENT))
    log = finished(c)
    assert current.exists() and advanced.exists(), f"C removed a live run's folder:\n{log[-3000:]}"
    assert f"{killed} was left half-graded by an interrupted run: it is graded again" in log, log[-3000:]
    for folder in (current, advanced):
        assert f"{folder} is being graded by a live run" in log, log[-3000:]
    assert (killed / GRADED_MARKER).exists()

    for folder in (current, advanced):
        (folder / "gate-open").touch()
    finished(a1)
    assert "graded:  1" in finished(a2)
    assert_full_marks(course, [("busy-student", CURRENT), ("busy-student", ADVANCED),
                               ("busy-student", ASSIGNMENT), ("killed-student", ASSIGNMENT)])


def test_a_second_run_of_the_same_submission_waits_for_the_first(course, runs):
    """``nbgrader autograde posenc --force`` started while another run grades the same student's same assignment
    waits for it (and says for whom), then grades it again: both succeed, and the gradebook has one submission
    with full marks; the first run's folder is never removed under it."""
    submit(course, "busy-student", ASSIGNMENT, gated=True)
    runs.append(first := start(course, "first", "nbgrader", "autograde", ASSIGNMENT))
    folder = at_gate(course, "busy-student", ASSIGNMENT, first)

    runs.append(second := start(course, "second", "nbgrader", "autograde", ASSIGNMENT, "--force"))
    waiting = f"another run is grading it (pid {first.pid} on "

    def second_waits():
        assert folder.exists() and first.poll() is None, f"the second run removed the first's live folder:\n" \
                                                          f"{output(second)[-3000:]}\n{output(first)[-3000:]}"
        return waiting in output(second)

    wait_for("the second run waiting for the first", second_waits, [second])
    (course / "submitted" / "busy-student" / ASSIGNMENT / "gate-open").touch()  # the second run's grading: no wait
    (folder / "gate-open").touch()
    finished(first)
    log = finished(second)
    assert "it is graded again" not in log, log[-3000:]  # the first run finished it: nothing half-graded was left
    assert (folder / GRADED_MARKER).exists()
    assert_full_marks(course, [("busy-student", ASSIGNMENT)])
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert len(gradebook.assignment_submissions(ASSIGNMENT)) == 1
