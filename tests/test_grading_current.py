"""The third assignment, ``posenc-current``, grades right: the proofs of the first two, on its notebook.

One class is graded in a single ``posenc-grade posenc-current --jobs 2`` run (module fixture), with real
kernels and a real SQLite gradebook, as in ``test_grading``: the reference answers (full marks), the blank
release (0), every wrong answer of ``current_answers`` (docked in its own exercise only), a differently
written correct answer for every exercise (full marks), wrong concept answers, and the hostile cases (a
crash, an endless loop, a memory bomb, a peek at the reference package, faked passes, a file that is not a
notebook, and the first assignment's notebook sent to this one). tests/test_current_answers.py judges the
same answers in process, in seconds.
"""

import nbformat
import pytest

from posenc_course import report
from posenc_course.course import new_course, run_nbgrader
from posenc_course.layout import (CURRENT, NOTEBOOK, points_per_exercise, points_per_test_cell, release_notebook,
                                  source_notebook)
from posenc_course.submissions import make_submission, reference_answers
from posenc_solutions import CURRENT_EXERCISES

from .current_answers import ALTERNATIVES, WRONG, WRONG_CONCEPTS
from .test_grading import (FAKE_PASSES, SOME, Student, answered, assert_row_scores, blank, grade_together,
                           grade_whole_class, log_lines, prefixed, raw, run_in_plain_kernel, shown, some, submit,
                           verdicts_of)

SOURCE = nbformat.read(source_notebook(CURRENT), as_version=4)
MAX_POINTS = points_per_exercise(SOURCE)  # from the notebook's metadata, never typed here
TEST_POINTS = points_per_test_cell(SOURCE)
ALL = dict(MAX_POINTS)

# two wrong answers, in two exercises, for the faked passes
FIRST, SECOND = (next(label for label, (exercise, _) in WRONG.items() if exercise == wanted) for wanted in ("ex01", "ex03"))
TWO_WRONG = {**WRONG[FIRST][1], **WRONG[SECOND][1]}
FIRST_FUNCTION = CURRENT_EXERCISES["ex01"][0]


def first_assignments_reference(kit):
    """The first assignment's notebook, fully answered, sent to this assignment by mistake."""
    answers = reference_answers(kit.course / "source" / "posenc" / NOTEBOOK)
    return make_submission(answers, release_notebook=kit.course / "release" / "posenc" / NOTEBOOK)


CLASS = [
    Student("reference", answered(), honest=True),
    Student("blank", blank, loses=ALL, honest=True),
    *(Student(f"wrong-{label}", answered(functions), loses=some(exercise), honest=True)
      for label, (exercise, functions) in WRONG.items()),
    *(Student(f"alt-{exercise}", answered({name: ALTERNATIVES[name] for name in names}), honest=True)
      for exercise, names in CURRENT_EXERCISES.items()),
    *(Student(f"concept-{label}", answered(answers=cells), loses={exercise: 1}, honest=True)
      for label, (exercise, cells) in WRONG_CONCEPTS.items()),
    Student("hostile-exit", prefixed(f"ex03_{CURRENT_EXERCISES['ex03'][1]}", "import os\nos._exit(1)"),
            loses=some("ex03"), says="KernelDied"),
    Student("endless-loop", prefixed(f"ex05_{CURRENT_EXERCISES['ex05'][0]}", "while True:\n    pass"),
            loses=some("ex05"), says="CellTimeoutError"),
    Student("hostile-call-memory", answered({"longrope_inv_freq": (
        "def longrope_inv_freq(*args, **kwargs):\n    hog = []\n    while True:\n        hog.append(bytearray(10**7))")}),
        loses=some("ex02"), says="MemoryError"),
    Student("peek-import", prefixed(f"ex01_{FIRST_FUNCTION}", f"from posenc_solutions import {FIRST_FUNCTION} as _reference"),
            loses=some("ex01")),
    Student("fake-passes", prefixed(f"ex01_{FIRST_FUNCTION}", FAKE_PASSES, TWO_WRONG),
            loses=some(WRONG[FIRST][0], WRONG[SECOND][0])),
    Student("malformed", raw('{"cells": [{"cell_type": "code", "source": "truncated'), loses=ALL,
            says="could not be graded as sent", logs="NotJSONError"),
    Student("first-assignment-sent-here", first_assignments_reference, loses=ALL,
            logs="a notebook of another assignment"),
]
STUDENTS = {student.name: student for student in CLASS}
assert len(STUDENTS) == len(CLASS), "two rows of CLASS have the same name"
#: the class as submitted: rows that change different exercises share a submission (test_grading.grade_together)
SUBMISSIONS = grade_together(CLASS, source_notebook(CURRENT))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade the whole CLASS in one run (posenc-grade); yield (course, scores, the run's result with its log)."""
    from types import SimpleNamespace

    course = new_course(tmp_path_factory.mktemp("course"))
    for assignment in ("posenc", CURRENT):
        result = run_nbgrader(course, "generate_assignment", assignment, "--force")
        assert result.returncode == 0, result.stdout + result.stderr
    kit = SimpleNamespace(course=course, assignment=CURRENT, release=release_notebook(CURRENT, course),
                          answers=reference_answers(source_notebook(CURRENT, course)))
    for submission in SUBMISSIONS:
        submit(submission, kit)
    result = grade_whole_class(course, CURRENT)
    yield course, report.exercise_scores(course / "gradebook.db", CURRENT), result


@pytest.mark.parametrize("student", CLASS, ids=lambda s: s.name)
def test_each_student_scores_what_the_table_says(graded, student):
    _, scores, _ = graded
    assert_row_scores(scores, student, SUBMISSIONS, source_notebook(CURRENT), MAX_POINTS)


@pytest.mark.parametrize("student", [s for s in CLASS if s.says], ids=lambda s: s.name)
def test_the_graded_notebook_tells_the_student_what_happened(graded, student):
    course, _, _ = graded
    graded_nb = nbformat.read(course / "autograded" / student.name / CURRENT / NOTEBOOK, as_version=4)
    assert student.says in shown(graded_nb)


@pytest.mark.parametrize("student", [s for s in CLASS if s.logs], ids=lambda s: s.name)
def test_the_log_says_why_a_submission_was_graded_as_it_was(graded, student):
    _, _, result = graded
    lines = log_lines(result, student.name)
    assert any(student.logs in line for line in lines), lines or "no log line about this student"


def test_the_whole_class_is_graded_in_one_run(graded):
    course, scores, result = graded
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert set(scores) == {p.name for p in (course / "submitted").iterdir()} == {s.name for s in SUBMISSIONS}


def test_the_proofs_cover_every_exercise():
    """At least two wrong answers and one wrong concept answer per exercise, an alternative for every
    function, and the notebook's exercises are the package's."""
    assert list(MAX_POINTS) == list(CURRENT_EXERCISES)
    wrong = {exercise: sum(1 for e, _ in WRONG.values() if e == exercise) for exercise in MAX_POINTS}
    assert min(wrong.values()) >= 2, wrong
    assert {e for e, _ in WRONG_CONCEPTS.values()} == set(MAX_POINTS)
    functions = {name for names in CURRENT_EXERCISES.values() for name in names}
    assert set(ALTERNATIVES) == functions


def test_the_score_check_can_fail():
    from .test_grading import score_problems

    assert score_problems(dict(MAX_POINTS), some("ex02"), MAX_POINTS)
    assert not score_problems(dict.fromkeys(MAX_POINTS, 0), ALL, MAX_POINTS)
    assert SOME is None


HONEST = [submission.name for submission in SUBMISSIONS if submission.honest]


@pytest.mark.parametrize("student", HONEST)
def test_a_test_cell_means_the_same_in_autograde_and_in_the_students_own_kernel(graded, student, tmp_path):
    """One verdict, as in ``test_grading``: each test cell has full marks under nbgrader autograde (the
    judge, the sandbox) exactly when it passes in a plain python3 kernel that runs the same graded
    notebook top to bottom, as the student runs it."""
    course, _, _ = graded
    autograded = nbformat.read(course / "autograded" / student / CURRENT / NOTEBOOK, as_version=4)
    in_kernel = run_in_plain_kernel(autograded, tmp_path)
    graded_verdicts, kernel_verdicts = verdicts_of(autograded), verdicts_of(in_kernel)
    assert graded_verdicts.keys() == kernel_verdicts.keys() == TEST_POINTS.keys()
    differ = {gid: f"{graded_verdicts[gid]:g} points in autograde, {kernel_verdicts[gid]:g} in the kernel"
              for gid, full in TEST_POINTS.items()
              if (graded_verdicts[gid] == full) != (kernel_verdicts[gid] == full)}
    assert not differ, f"{student}: {differ}"
