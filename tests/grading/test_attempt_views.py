"""Three views of who attempted what, on one set of notebooks: the class report, ``posenc-check`` and the
notebook's own progress cell (issue 47).

Three students: ``blank`` (the release as it is), ``started`` (exercise 1 done, exercises 2 and 3 each with one
answer of their own and the others still the stub, the rest as released) and ``done`` (the reference answers).
They are graded once by real ``nbgrader autograde`` (a module fixture), and each of their notebooks runs top to
bottom in a real kernel, as Run All runs it. Then, per student and per exercise, each view's own words are read
back into a verdict, *not attempted*, *started* or *answered* (:mod:`hardened_grading.attempts`):

- the class report (``python -m posenc_course.class_report --students STUDENT``): its line of the exercise,
  "attempted A (S of them only started: ...); not attempted N";
- ``posenc-check --json``: each exercise's ``"attempt"``; and ``posenc-check``'s table: "not attempted" ends the row
  of an exercise not attempted;
- the progress cell: "not attempted", or "started: ..." for an exercise with some answers still the stub, or its
  visible tests' verdict for one without any.

All must say what :data:`EXPECTED` says, in the same words: a view that said "not tried", or that did not tell a
started exercise, fails here. ``posenc-check`` is given the module's grading in place of its own (its ``grade``:
one autograde of the three, not three more); everything after grading is its own ``main``.
"""

import json
import re
from types import SimpleNamespace

import nbformat
import pytest

from hardened_grading.attempts import ANSWERED, NOT_ATTEMPTED, STARTED
from hardened_grading.summary import checks_by_exercise
from posenc_course import class_report
from posenc_course.course import generate, new_course, run_nbgrader
from posenc_course.layout import ASSIGNMENT, NOTEBOOK, exercise_of
from posenc_course.report import exercise_scores
from posenc_course.student import check
from posenc_course.submissions import make_submission, reference_answers, write_submission

from ..helpers.grading import MAX_POINTS, run_in_plain_kernel

#: The answer cells each student wrote (by grade id, from the reference answers); the others keep the stub.
#: ``started``: all of exercise 1, exercise 2's concept answer alone, exercise 3's relative_position_matrix alone.
WRITTEN = {"blank": (),
           "started": ("ex01_", "ex02_tokens_with_a_row_answer", "ex03_relative_position_matrix"),
           "done": ("ex",)}
#: What every view must say of each student's exercises.
EXPECTED = {"blank": dict.fromkeys(MAX_POINTS, NOT_ATTEMPTED),
            "started": {**dict.fromkeys(MAX_POINTS, NOT_ATTEMPTED), "ex01": ANSWERED, "ex02": STARTED, "ex03": STARTED},
            "done": dict.fromkeys(MAX_POINTS, ANSWERED)}


def written(answers, prefixes):
    """The `answers` (``{grade id: code}``) whose grade id starts with one of `prefixes`."""
    return {cell: code for cell, code in answers.items() if prefixes and cell.startswith(prefixes)}


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    """The three students' notebooks in a course, graded once by ``nbgrader autograde``; and each notebook as Run
    All leaves it in a plain kernel (its progress cell's output)."""
    course = new_course(tmp_path_factory.mktemp("course"))
    release = generate(course)
    answers = reference_answers(course / "source" / ASSIGNMENT / NOTEBOOK)
    notebooks = {student: make_submission(written(answers, prefixes), release_notebook=release)
                 for student, prefixes in WRITTEN.items()}
    paths = {student: write_submission(notebook, course / "submitted", student)
             for student, notebook in notebooks.items()}
    result = run_nbgrader(course, "autograde", ASSIGNMENT, "--force")
    assert result.returncode == 0, result.stderr[-2000:]
    ran = {student: run_in_plain_kernel(notebook, tmp_path_factory.mktemp(student))
           for student, notebook in notebooks.items()}
    return SimpleNamespace(course=course, paths=paths, ran=ran)


def exercise_rows(text):
    """``{exercise: its row}`` of a table whose rows start with the exercise (``ex03 ...``, ``ex03: ...``)."""
    return {line[:4]: line for line in text.splitlines() if re.match(r"ex\d\d\b", line)}


# Each view, read back into a verdict -------------------------------------------------------------

REPORT_COUNTS = re.compile(r"attempted (\d+) \((\d+) of them only started: some answers still the stub\); "
                           + NOT_ATTEMPTED + r" (\d+);")


def report_verdicts(course, student, capsys):
    """``{exercise: verdict}`` of the class report of `student` alone (its command, ``--students``): its line
    of each exercise counts one student, as not attempted, only started or attempted."""
    assert class_report.main([str(course), "--students", student, "--out", f"reports/{student}.html"]) == 0
    verdicts = {}
    for exercise, row in exercise_rows(capsys.readouterr().out).items():
        counts = REPORT_COUNTS.search(row)
        assert counts, f"the report's line of {exercise} does not count attempts in its words: {row}"
        attempted, started, idle = map(int, counts.groups())
        assert attempted + idle == 1, row
        verdicts[exercise] = NOT_ATTEMPTED if idle else STARTED if started else ANSWERED
    return verdicts


def checked(views, student, monkeypatch, capsys, *options):
    """What ``posenc-check STUDENT'S-NOTEBOOK *options`` prints, with the module's grading of it as its own."""
    autograded = views.course / "autograded" / student / ASSIGNMENT / NOTEBOOK
    grading = (exercise_scores(views.course / "gradebook.db")[student],
               checks_by_exercise(autograded, full=False, part_of=exercise_of))
    monkeypatch.setattr(check, "grade", lambda notebook, workdir: grading)
    check.main([str(views.paths[student]), *options])
    return capsys.readouterr().out


def check_json_verdicts(views, student, monkeypatch, capsys):
    """``{exercise: verdict}`` of ``posenc-check --json``: each exercise's "attempt"."""
    exercises = json.loads(checked(views, student, monkeypatch, capsys, "--json"))["exercises"]
    return {exercise: shown["attempt"] for exercise, shown in exercises.items()}


def check_table_idle(views, student, monkeypatch, capsys):
    """The exercises ``posenc-check``'s table calls not attempted: their row ends with the words."""
    rows = exercise_rows(checked(views, student, monkeypatch, capsys))
    assert set(rows) == set(MAX_POINTS), rows
    return {exercise for exercise, row in rows.items() if row.endswith(NOT_ATTEMPTED)}


PASSES = re.compile(r"passes its visible tests \(\d+ test cells\)$")


def progress_verdicts(notebook):
    """``{exercise: verdict}`` of the progress cell's output after Run All: a row that says "not attempted", one
    that starts "started: ", or one whose visible tests all pass (the only other row of these notebooks)."""
    text = "".join(output.get("text", "") for output in notebook.cells[-1].get("outputs", []))
    verdicts = {}
    for exercise, row in exercise_rows(text).items():
        status = row.split(None, 2)[2]
        verdicts[exercise] = (NOT_ATTEMPTED if status == NOT_ATTEMPTED else STARTED if status.startswith(f"{STARTED}: ")
                              else ANSWERED if PASSES.search(status) else f"unknown: {status}")
    return verdicts


# The three views agree -----------------------------------------------------------------------------

@pytest.mark.parametrize("student", list(WRITTEN))
def test_the_class_report_says_what_each_student_attempted(views, student, capsys):
    assert report_verdicts(views.course, student, capsys) == EXPECTED[student]


@pytest.mark.parametrize("student", list(WRITTEN))
def test_posenc_check_says_the_same_in_its_json_and_its_table(views, student, monkeypatch, capsys):
    assert check_json_verdicts(views, student, monkeypatch, capsys) == EXPECTED[student]
    idle = {exercise for exercise, verdict in EXPECTED[student].items() if verdict == NOT_ATTEMPTED}
    assert check_table_idle(views, student, monkeypatch, capsys) == idle


@pytest.mark.parametrize("student", list(WRITTEN))
def test_the_progress_cell_says_the_same_after_run_all(views, student):
    assert progress_verdicts(views.ran[student]) == EXPECTED[student]
