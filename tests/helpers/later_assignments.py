"""The proofs of the later graded assignments (``posenc-advanced``, ``posenc-current``), written once.

Each assignment's module (``test_grading_advanced``, ``test_grading_current``) makes its class with
:func:`later_assignment`, and its tests call the functions below: the class is graded in a single
``posenc-grade A --jobs 2`` run, with real kernels and a real SQLite gradebook, as in ``test_grading``: the
reference answers (full marks), the blank release (0), every wrong answer of the assignment's tables (docked in
its own exercise only), a differently written correct answer for every exercise (full marks), wrong concept
answers, and the hostile cases (a crash, an endless loop, a memory bomb, a peek at the reference package, faked
passes, a file that is not a notebook, and the first assignment's notebook sent to this one).
"""

from types import SimpleNamespace

import nbformat

from posenc_course import report
from posenc_course.course import new_course
from posenc_course.layout import (NOTEBOOK, points_per_exercise, points_per_test_cell, release_notebook,
                                  source_notebook)
from posenc_course.submissions import make_submission, reference_answers

from .children import run_nbgrader
from .grading import (FAKE_PASSES, SOME, Student, answered, assert_row_scores, blank, grade_together, grade_whole_class,
                      log_lines, prefixed, raw, run_in_plain_kernel, score_problems, shown, some, submit, verdicts_of)


def first_assignments_reference(kit):
    """The first assignment's notebook, fully answered, sent to this assignment by mistake."""
    answers = reference_answers(kit.course / "source" / "posenc" / NOTEBOOK)
    return make_submission(answers, release_notebook=kit.course / "release" / "posenc" / NOTEBOOK)


def later_assignment(assignment, exercises, tables, memory_hog, own_way=None):
    """The class of `assignment` and what its proofs need.

    `exercises` is its ``{exercise: function names}``; `tables` the module of its answer tables (``WRONG``,
    ``WRONG_CONCEPTS``, ``ALTERNATIVES``); `memory_hog` the ``(function, exercise)`` the memory bomb takes the
    place of; `own_way`, if given, one student's answers to every function, each written their own way.
    """
    source = nbformat.read(source_notebook(assignment), as_version=4)
    maxima = points_per_exercise(source)  # from the notebook's metadata, never typed here
    wrong, every_exercise = tables.WRONG, dict(maxima)
    # two wrong answers, in two exercises, for the faked passes
    first, second = (next(label for label, (exercise, _) in wrong.items() if exercise == wanted)
                     for wanted in ("ex01", "ex03"))
    first_function = exercises["ex01"][0]
    hog, hog_exercise = memory_hog
    rows = [
        Student("reference", answered(), honest=True),
        Student("blank", blank, loses=every_exercise, honest=True),
        *(Student(f"wrong-{label}", answered(functions), loses=some(exercise), honest=True)
          for label, (exercise, functions) in wrong.items()),
        *(Student(f"alt-{exercise}", answered({name: tables.ALTERNATIVES[name] for name in names}), honest=True)
          for exercise, names in exercises.items()),
        *([Student("student-own-way", answered(own_way), honest=True)] if own_way is not None else []),
        *(Student(f"concept-{label}", answered(answers=cells), loses={exercise: 1}, honest=True)
          for label, (exercise, cells) in tables.WRONG_CONCEPTS.items()),
        Student("hostile-exit", prefixed(f"ex03_{exercises['ex03'][1]}", "import os\nos._exit(1)"),
                loses=some("ex03"), says="KernelDied"),
        Student("endless-loop", prefixed(f"ex05_{exercises['ex05'][0]}", "while True:\n    pass"),
                loses=some("ex05"), says="CellTimeoutError"),
        Student("hostile-call-memory", answered({hog: (
            f"def {hog}(*args, **kwargs):\n    hog = []\n    while True:\n        hog.append(bytearray(10**7))")}),
            loses=some(hog_exercise), says="MemoryError"),
        Student("peek-import", prefixed(f"ex01_{first_function}",
                                        f"from posenc_solutions import {first_function} as _reference"),
                loses=some("ex01")),
        Student("fake-passes", prefixed(f"ex01_{first_function}", FAKE_PASSES, {**wrong[first][1], **wrong[second][1]}),
                loses=some(wrong[first][0], wrong[second][0])),
        Student("malformed", raw('{"cells": [{"cell_type": "code", "source": "truncated'), loses=every_exercise,
                says="could not be graded as sent", logs="NotJSONError"),
        Student("first-assignment-sent-here", first_assignments_reference, loses=every_exercise,
                logs="a notebook of another assignment"),
    ]
    assert len({student.name for student in rows}) == len(rows), "two rows of the class have the same name"
    #: the class as submitted: rows that change different exercises share a submission (test_grading.grade_together)
    submissions = grade_together(rows, source_notebook(assignment))
    return SimpleNamespace(assignment=assignment, exercises=exercises, tables=tables, own_way=own_way,
                           max_points=maxima, test_points=points_per_test_cell(source), rows=rows,
                           submissions=submissions,
                           honest=[submission.name for submission in submissions if submission.honest])


def grade(proofs, tmp_path_factory):
    """Grade the whole class in one run (posenc-grade); return (course, scores, the run's result with its log)."""
    assignment = proofs.assignment
    course = new_course(tmp_path_factory.mktemp("course"))
    for name in ("posenc", assignment):
        result = run_nbgrader(course, "generate_assignment", name, "--force")
        assert result.returncode == 0, result.stdout + result.stderr
    kit = SimpleNamespace(course=course, assignment=assignment, release=release_notebook(assignment, course),
                          answers=reference_answers(source_notebook(assignment, course)))
    for submission in proofs.submissions:
        submit(submission, kit)
    result = grade_whole_class(course, assignment)
    return course, report.exercise_scores(course / "gradebook.db", assignment), result


def check_scores(proofs, graded, student):
    _, scores, _ = graded
    assert_row_scores(scores, student, proofs.submissions, source_notebook(proofs.assignment), proofs.max_points)


def check_what_the_notebook_says(proofs, graded, student):
    course, _, _ = graded
    graded_nb = nbformat.read(course / "autograded" / student.name / proofs.assignment / NOTEBOOK, as_version=4)
    assert student.says in shown(graded_nb)


def check_what_the_log_says(graded, student):
    _, _, result = graded
    lines = log_lines(result, student.name)
    assert any(student.logs in line for line in lines), lines or "no log line about this student"


def check_one_run(proofs, graded):
    course, scores, result = graded
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert set(scores) == {p.name for p in (course / "submitted").iterdir()} == {s.name for s in proofs.submissions}


def check_the_proofs_cover_every_exercise(proofs):
    """At least two wrong answers and one wrong concept answer per exercise, an alternative for every
    function (and the own-way student's, if any), and the notebook's exercises are the package's."""
    maxima = proofs.max_points
    assert list(maxima) == list(proofs.exercises)
    wrong = {exercise: sum(1 for e, _ in proofs.tables.WRONG.values() if e == exercise) for exercise in maxima}
    assert min(wrong.values()) >= 2, wrong
    assert {e for e, _ in proofs.tables.WRONG_CONCEPTS.values()} == set(maxima)
    functions = {name for names in proofs.exercises.values() for name in names}
    assert set(proofs.tables.ALTERNATIVES) == functions
    if proofs.own_way is not None:
        assert set(proofs.own_way) == functions


def check_the_score_check_can_fail(proofs):
    maxima = proofs.max_points
    assert score_problems(dict(maxima), some("ex02"), maxima)
    assert not score_problems(dict.fromkeys(maxima, 0), dict(maxima), maxima)
    assert SOME is None


def check_one_verdict(proofs, graded, student, tmp_path):
    """One verdict, as in ``test_grading``: each test cell has full marks under nbgrader autograde (the
    judge, the sandbox) exactly when it passes in a plain python3 kernel that runs the same graded
    notebook top to bottom, as the student runs it."""
    course, _, _ = graded
    autograded = nbformat.read(course / "autograded" / student / proofs.assignment / NOTEBOOK, as_version=4)
    in_kernel = run_in_plain_kernel(autograded, tmp_path)
    graded_verdicts, kernel_verdicts = verdicts_of(autograded), verdicts_of(in_kernel)
    assert graded_verdicts.keys() == kernel_verdicts.keys() == proofs.test_points.keys()
    differ = {gid: f"{graded_verdicts[gid]:g} points in autograde, {kernel_verdicts[gid]:g} in the kernel"
              for gid, full in proofs.test_points.items()
              if (graded_verdicts[gid] == full) != (kernel_verdicts[gid] == full)}
    assert not differ, f"{student}: {differ}"
