"""Every mistake an exercise names is a wrong answer here, and costs at least the rubric's share of its function's
points in its own exercise (posenc_course/authoring/rubric.py); the docs' table is that measure. That it costs
nothing in another exercise is tests/unit/test_answers_in_process.py's proof, for every wrong answer."""

import pytest

from posenc_course.authoring.rubric import named_mistakes

from ..helpers import named_mistakes as named

CASES = [(assignment, exercise, index, label) for assignment, exercises in named.NAMED.items()
         for exercise, labels in exercises.items() for index, label in enumerate(labels)]


@pytest.fixture(scope="module")
def measured():
    """``{(assignment, label): (function, points lost in its exercise, the function's points)}``, each graded once."""
    return {(assignment, label): named.cost(assignment, label) for assignment, _, _, label in CASES}


@pytest.mark.parametrize("assignment", named.NAMED)
def test_each_mistake_the_text_names_has_its_wrong_answer(assignment):
    text = named.the_text(assignment)
    assert all(text.values()), f"a Common mistakes paragraph without its list: {[e for e, m in text.items() if not m]}"
    assert {exercise: len(mistakes) for exercise, mistakes in text.items()} == \
        {exercise: len(labels) for exercise, labels in named.NAMED[assignment].items()}, \
        "tests/helpers/named_mistakes.py: NAMED lists a wrong answer per named mistake, in the text's order"
    for exercise, labels in named.NAMED[assignment].items():
        assert [named.WRONG[assignment][label][0] for label in labels] == [exercise] * len(labels), exercise


@pytest.mark.parametrize(("assignment", "exercise", "index", "label"), CASES,
                         ids=[f"{a}-{e}-{label}" for a, e, _, label in CASES])
def test_a_named_mistake_costs_its_share_in_its_exercise(measured, assignment, exercise, index, label):
    function, lost, points = measured[assignment, label]
    mistake, share = named.the_text(assignment)[exercise][index], named.shares(assignment)[label]
    assert lost >= round(share * points, 2), \
        f"{label} ({mistake!r}) costs {lost} of {function}'s {points} points, under {share:.0%}"


def test_the_docs_table_is_the_measure(measured):
    rows = [(assignment, exercise, measured[assignment, label][0], named.the_text(assignment)[exercise][index], label,
             measured[assignment, label][1], measured[assignment, label][2],
             named.shares(assignment)[label]) for assignment, exercise, index, label in CASES]
    assert named.TABLE.read_text(encoding="utf-8") == named.page(rows), \
        f"{named.TABLE} is stale: run `make mistakes-table`"


def test_the_list_is_read_item_by_item_and_an_empty_one_is_seen():
    spec = ("## Exercise 1 ★ A\n**Common mistake.**\n\n- One,\n  on two lines.\n\n**(a)** Q.\n- not a mistake\n"
            "## Exercise 2 ★ B\n**Common mistakes.** In prose,\nno list.\n\n**(a)** Q.\n- a list of the question\n"
            "## Exercise 3 ★ C\n**(a)** Q.\n")
    assert named_mistakes(spec) == {"ex01": ["One, on two lines."], "ex02": []}
