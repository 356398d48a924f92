"""The second assignment, ``posenc-advanced``, grades right: the proofs of the first, on its notebook.

The proofs are those of every later assignment, written once in ``tests/helpers/later_assignments.py``: one class graded
in a single ``posenc-grade posenc-advanced --jobs 2`` run, with real kernels and a real SQLite gradebook.
Besides the rows every later assignment has, one student writes every function their own way
(``advanced_answers.STUDENT_ALTERNATIVES``), at full marks.
"""

import pytest

from posenc_course.layout import ADVANCED
from posenc_solutions import ADVANCED_EXERCISES

from ..helpers import advanced_answers, later_assignments as proofs_of

PROOFS = proofs_of.later_assignment(ADVANCED, ADVANCED_EXERCISES, advanced_answers,
                                    memory_hog=("yarn_inv_freq", "ex06"), own_way=advanced_answers.STUDENT_ALTERNATIVES)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The whole class graded in one run: (course, scores, the run's result with its log)."""
    return proofs_of.grade(PROOFS, tmp_path_factory)


@pytest.mark.parametrize("student", PROOFS.rows, ids=lambda s: s.name)
def test_each_student_scores_what_the_table_says(graded, student):
    proofs_of.check_scores(PROOFS, graded, student)


@pytest.mark.parametrize("student", [s for s in PROOFS.rows if s.says], ids=lambda s: s.name)
def test_the_graded_notebook_tells_the_student_what_happened(graded, student):
    proofs_of.check_what_the_notebook_says(PROOFS, graded, student)


@pytest.mark.parametrize("student", [s for s in PROOFS.rows if s.logs], ids=lambda s: s.name)
def test_the_log_says_why_a_submission_was_graded_as_it_was(graded, student):
    proofs_of.check_what_the_log_says(graded, student)


def test_the_whole_class_is_graded_in_one_run(graded):
    proofs_of.check_one_run(PROOFS, graded)


def test_the_proofs_cover_every_exercise():
    proofs_of.check_the_proofs_cover_every_exercise(PROOFS)


def test_the_score_check_can_fail():
    proofs_of.check_the_score_check_can_fail(PROOFS)


@pytest.mark.parametrize("student", PROOFS.honest)
def test_a_test_cell_means_the_same_in_autograde_and_in_the_students_own_kernel(graded, student, tmp_path):
    proofs_of.check_one_verdict(PROOFS, graded, student, tmp_path)
