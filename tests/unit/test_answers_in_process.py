"""The graded assignments' hidden tests catch every wrong answer in its own exercise, and pass every alternative:
the fast layer, in this process, through the real judge (:func:`posenc_course.dryrun.run_against_reference`).

tests/grading/test_grading.py, tests/grading/test_grading_advanced.py and tests/grading/test_grading_current.py grade the same answers
with nbgrader, in real kernels; this module says within seconds, and per answer, which one a change of the notebook's tests lets through.
"""


import nbformat
import pytest

from posenc_course.authoring.dryrun import run_against_reference
from posenc_course.layout import ADVANCED, ASSIGNMENT, CURRENT, exercise_functions, exercise_of, source_notebook
from posenc_course.submissions import make_submission

from ..helpers import advanced_answers, current_answers, student_alternatives, wrong_solutions

#: ``{assignment: module}`` of each assignment's answer tables: ``WRONG``, ``WRONG_CONCEPTS`` and, for the later
#: two, ``ALTERNATIVES`` (one per function); the first assignment's correct answers written another way are
#: ``tests/helpers/student_alternatives.py``'s, several functions each.
TABLES = {ASSIGNMENT: wrong_solutions, ADVANCED: advanced_answers, CURRENT: current_answers}


def alternatives():
    """``[(assignment, label, {function: code})]``: every correct answer written another way."""
    rows = [(ASSIGNMENT, label, functions) for label, functions in student_alternatives.STUDENT_ALTERNATIVES.items()]
    for assignment in (ADVANCED, CURRENT):
        rows += [(assignment, name, {name: code}) for name, code in TABLES[assignment].ALTERNATIVES.items()]
    rows += [(ADVANCED, f"student:{name}", {name: code})
             for name, code in advanced_answers.STUDENT_ALTERNATIVES.items()]
    return sorted(rows, key=lambda row: row[:2])


def with_functions(assignment, functions):
    """The source notebook (its hidden tests included) with these functions' answer cells holding `functions`."""
    return make_submission(functions=functions, release_notebook=source_notebook(assignment))


def with_answers(assignment, cells):
    """The source notebook with these concept answer cells ({grade id: code}) replaced."""
    return make_submission(answers=cells, release_notebook=source_notebook(assignment))


def failing_exercises(notebook):
    """``{exercise: [failing test cells]}`` of the notebook judged against its own answers."""
    failing = {}
    for grade_id, error in run_against_reference(notebook).items():
        if error is not None:
            failing.setdefault(exercise_of(grade_id), []).append(grade_id)
    return failing


def rows(table):
    return [(assignment, label) for assignment, module in TABLES.items() for label in sorted(getattr(module, table))]


@pytest.mark.parametrize("assignment", TABLES)
def test_the_reference_passes_everything(assignment):
    assert failing_exercises(nbformat.read(str(source_notebook(assignment)), as_version=4)) == {}


@pytest.mark.parametrize("assignment, label", rows("WRONG"))
def test_a_wrong_answer_loses_points_in_its_own_exercise_only(assignment, label):
    exercise, functions = TABLES[assignment].WRONG[label]
    failing = failing_exercises(with_functions(assignment, functions))
    assert exercise in failing, f"{label}: every test cell of {exercise} passes"
    assert set(failing) == {exercise}, f"{label}: other exercises fail too: {failing}"


@pytest.mark.parametrize("assignment, label", rows("WRONG_CONCEPTS"))
def test_a_wrong_concept_answer_loses_its_point(assignment, label):
    exercise, cells = TABLES[assignment].WRONG_CONCEPTS[label]
    failing = failing_exercises(with_answers(assignment, cells))
    assert failing == {exercise: [name.removesuffix("_answer") + "_test" for name in cells]}, (label, failing)


@pytest.mark.parametrize("assignment, label, functions",
                         [pytest.param(*row, id=f"{row[0]}-{row[1]}") for row in alternatives()])
def test_an_answer_written_another_way_keeps_full_marks(assignment, label, functions):
    assert failing_exercises(with_functions(assignment, functions)) == {}


@pytest.mark.parametrize("assignment", (ADVANCED, CURRENT))
def test_every_function_has_an_alternative_and_every_exercise_wrong_answers(assignment):
    table, exercises = TABLES[assignment], exercise_functions(assignment)
    functions = {name for names in exercises.values() for name in names}
    assert set(table.ALTERNATIVES) == functions
    for exercise, names in exercises.items():
        assert any(where == exercise for where, _ in table.WRONG.values()), f"{exercise}: no wrong answer"
        assert any(where == exercise for where, _ in table.WRONG_CONCEPTS.values()), f"{exercise}: no wrong concept answer"


def test_every_function_of_the_third_assignment_has_two_wrong_answers():
    for exercise, names in exercise_functions(CURRENT).items():
        for name in names:
            wrong = [label for label, (where, changed) in current_answers.WRONG.items()
                     if where == exercise and name in changed]
            assert len(wrong) >= 2, f"{exercise} {name}: only {wrong}"


@pytest.mark.parametrize("assignment, cells", [
    (ASSIGNMENT, {"ex02_tokens_with_a_row_answer": "ex02_tokens_with_a_row = 24.0"}),
    (CURRENT, {"ex03_stale_count_answer": "ex03_stale_count = 3100.0"}),
], ids=["posenc-ex02", "posenc-current-ex03"])
def test_a_whole_number_written_as_a_float_passes_its_questions_checks_the_visible_one_too(assignment, cells):
    """The notebook says any equal number counts: 24.0 kept its point, but the visible form check failed beside it
    (posenc-check said "4/4  1 failed check")."""
    assert failing_exercises(with_answers(assignment, cells)) == {}
