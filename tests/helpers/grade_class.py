"""A class of the first assignment in a course of its own, graded by ``posenc-grade`` or by serial ``nbgrader
autograde``, and its gradebook read back: what the tests of the class grader share (tests/grading/test_grade_class.py,
tests/grading/test_grade_class_runs.py, tests/unit/test_ahead.py, tests/system/test_slurm.py)."""

import sys
from types import SimpleNamespace

from hardened_grading.class_grading import gradebook as class_grading_gradebook
from posenc_course.course import generate, load_config, nbgrader_env, new_course
from posenc_course.submissions import reference_answers

from . import children
from .children import run_nbgrader
from .grading import STUDENTS, assert_scores, submit

SMALL_CLASS = [STUDENTS[name] for name in (
    "reference", "wrong-strict_causal", "blank", "wrong-rope_half_split", "alt-ex05", "hostile-exit")]


def make_course(folder, students, db_url=None):
    """A course in `folder` with `students`' submissions and, when given, its gradebook at `db_url`
    (set in nbgrader_config.py, as an instructor sets it)."""
    course = new_course(folder)
    if db_url:
        with open(course / "nbgrader_config.py", "a") as config:
            config.write(f"\nc.CourseDirectory.db_url = {db_url!r}\n")
    kit = SimpleNamespace(course=course, release=generate(course),
                          answers=reference_answers(course / "source" / "posenc" / "exercises.ipynb"))
    for student in students:
        submit(student, kit)
    return course


def db_url_of(course):
    return class_grading_gradebook.gradebook_url(load_config(course), course)


def grades(db_url):
    """``{student: {grade cell: score}}`` of every graded submission in the gradebook at `db_url`, and the
    number of submission rows."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url, "posenc") as gradebook:
        submissions = gradebook.assignment_submissions("posenc")
        scores = {s.student.id: {g.name: g.score for n in s.notebooks for g in n.grades} for s in submissions}
        return scores, len(submissions)


def exercise_scores(db_url):
    """``{student: {exercise: (score, max_score)}}``, as :func:`posenc_course.report.exercise_scores` gives it."""
    from posenc_course import report

    return report.exercise_scores(db_url)


def posenc_grade(course, *args, timeout=900):
    return children.run([sys.executable, "-m", "posenc_course.instructor.grade", *args], cwd=course,
                      env=nbgrader_env(), capture_output=True, text=True, timeout=timeout)


def assert_expected_scores(db_url, students):
    scores = exercise_scores(db_url)
    assert set(scores) == {student.name for student in students}
    for student in students:
        assert_scores(scores, student.name, student.loses)


def serial_scores(folder, students):
    """`students` graded by plain ``nbgrader autograde`` in a course in `folder`, one submission after another, on
    SQLite: their scores, as :func:`grades` gives them, the reference for a parallel run."""
    course = make_course(folder, students)
    result = run_nbgrader(course, "autograde", "posenc")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    scores, rows = grades(db_url_of(course))
    assert rows == len(students) == len(scores)
    return scores
