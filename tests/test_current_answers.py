"""posenc-current's hidden tests catch every wrong answer in its own exercise, and pass every alternative: the
fast layer, in this process, through the real judge (:func:`posenc_course.dryrun.run_against_reference`).

tests/test_grading_current.py grades the same answers with nbgrader, in real kernels; this module says within
seconds, and per answer, which one a change of the notebook's tests lets through.
"""


import nbformat
import pytest

from posenc_course.dryrun import run_against_reference
from posenc_course.layout import CURRENT, exercise_of, source_notebook
from posenc_course.submissions import make_submission
from posenc_solutions import CURRENT_EXERCISES

from .current_answers import ALTERNATIVES, WRONG, WRONG_CONCEPTS

SOURCE = nbformat.read(str(source_notebook(CURRENT)), as_version=4)


def with_functions(functions):
    """The source notebook (its hidden tests included) with these functions' answer cells holding `functions`."""
    return make_submission(functions=functions, release_notebook=source_notebook(CURRENT))


def with_answers(cells):
    """The source notebook with these concept answer cells ({grade id: code}) replaced."""
    return make_submission(answers=cells, release_notebook=source_notebook(CURRENT))


def failing_exercises(notebook):
    """``{exercise: [failing test cells]}`` of the notebook judged against its own answers."""
    failing = {}
    for grade_id, error in run_against_reference(notebook).items():
        if error is not None:
            failing.setdefault(exercise_of(grade_id), []).append(grade_id)
    return failing


def test_the_reference_passes_everything():
    assert failing_exercises(SOURCE) == {}


@pytest.mark.parametrize("label", sorted(WRONG))
def test_a_wrong_answer_loses_points_in_its_own_exercise_only(label):
    exercise, functions = WRONG[label]
    failing = failing_exercises(with_functions(functions))
    assert exercise in failing, f"{label}: every test cell of {exercise} passes"
    assert set(failing) == {exercise}, f"{label}: other exercises fail too: {failing}"


@pytest.mark.parametrize("label", sorted(WRONG_CONCEPTS))
def test_a_wrong_concept_answer_loses_its_point(label):
    exercise, cells = WRONG_CONCEPTS[label]
    failing = failing_exercises(with_answers(cells))
    assert failing == {exercise: [name.removesuffix("_answer") + "_test" for name in cells]}, (label, failing)


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_an_answer_written_another_way_keeps_full_marks(name):
    assert failing_exercises(with_functions({name: ALTERNATIVES[name]})) == {}


def test_every_function_has_an_alternative_and_every_exercise_wrong_answers():
    functions = {name for names in CURRENT_EXERCISES.values() for name in names}
    assert set(ALTERNATIVES) == functions
    for exercise, names in CURRENT_EXERCISES.items():
        for name in names:
            wrong = [label for label, (where, changed) in WRONG.items() if where == exercise and name in changed]
            assert len(wrong) >= 2, f"{exercise} {name}: only {wrong}"
        assert any(where == exercise for where, _ in WRONG_CONCEPTS.values()), f"{exercise}: no wrong concept answer"
