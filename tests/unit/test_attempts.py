"""The one definition of an attempt (:mod:`hardened_grading.attempts`), on notebooks made in memory: for any
nbgrader course, from the release's answers or from nbgrader's own checksums."""

import nbformat
import pytest
from nbgrader.utils import compute_checksum

from hardened_grading.attempts import (ANSWERED, NOT_ATTEMPTED, STARTED, Attempts, answers_state, part_states,
                                       release_sources, stub_answers, unchanged_from_release)
from hardened_grading.summary import part_by_pattern

from ..helpers.cells import answer_cell, grade_cell

SQUARES_STUB = "def squares(n):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
CUBES_STUB = "def cubes(n):\n    # YOUR CODE HERE\n    raise NotImplementedError()"


def released(cell):
    """`cell` as ``nbgrader generate_assignment`` releases it: with the checksum of its source."""
    cell.metadata["nbgrader"]["checksum"] = compute_checksum(cell)
    return cell


def powers(squares=SQUARES_STUB, cubes=CUBES_STUB):
    """A student's notebook of a course of nbgrader's: part ``powers`` is two answers, each above its tests; the
    answers' checksums are the release's."""
    notebook = nbformat.v4.new_notebook(cells=[
        released(answer_cell(SQUARES_STUB, "squares")), grade_cell("assert squares(2) == [1, 4]", "powers_squares", 1),
        released(answer_cell(CUBES_STUB, "cubes")), grade_cell("assert cubes(2) == [1, 8]", "powers_cubes", 1),
        grade_cell("assert cubes(3)[-1] == 27", "powers_cubes_more", 1)])
    notebook.cells[0].source, notebook.cells[2].source = squares, cubes
    return notebook


@pytest.mark.parametrize("answers, stubs, state", [
    ({"a", "b"}, {"a", "b"}, NOT_ATTEMPTED),
    ({"a", "b"}, {"b", "c"}, STARTED),
    ({"a", "b"}, {"c"}, ANSWERED),
    (set(), {"a"}, None),
])
def test_answers_are_not_attempted_started_or_answered(answers, stubs, state):
    assert answers_state(answers, stubs) == state


@pytest.mark.parametrize("squares, cubes, state", [
    (SQUARES_STUB, CUBES_STUB, NOT_ATTEMPTED),
    ("def squares(n):\n    return [1, 4]", CUBES_STUB, STARTED),
    ("def squares(n):\n    return [1, 4]", "def cubes(n):\n    return [1]", ANSWERED),
])
def test_without_the_release_nbgrader_s_checksums_tell_a_stub(squares, cubes, state):
    assert part_states(powers(squares, cubes), part_by_pattern(r"^(powers)_")) == {"powers": state}


def test_each_test_cell_is_a_part_of_its_own_by_default_with_the_answers_above_it():
    notebook = powers("def squares(n):\n    return [1, 4]")
    assert part_states(notebook, lambda test: test) == {
        "powers_squares": ANSWERED, "powers_cubes": NOT_ATTEMPTED, "powers_cubes_more": NOT_ATTEMPTED}


def test_the_release_s_source_says_a_stub_up_to_blank_space_at_its_ends():
    release = powers()
    student = powers(SQUARES_STUB + "\n\n", "def cubes(n):\n    return [1]")
    for cell in student.cells:  # a notebook that lost its checksums: the release says
        cell.metadata["nbgrader"].pop("checksum", None)
    assert stub_answers(student, released=release_sources(release)) == {"squares"}
    assert stub_answers(student) == set()  # neither the release nor a checksum: the student's own


def test_a_changed_source_is_no_stub_even_with_the_release_s_checksum():
    cell = released(answer_cell(SQUARES_STUB, "squares"))
    assert unchanged_from_release(cell)
    cell.source = SQUARES_STUB.replace("raise NotImplementedError()", "return []")
    assert not unchanged_from_release(cell)


def test_a_course_s_own_stub_words_and_answers():
    """A course whose stubs say words of their own, and whose test cells name their answers: an answer edited that
    still says them is a stub; one that does not (cubes, nbgrader's stub here) is the student's."""
    attempts = Attempts(is_stub=lambda source: "not answered yet" in source,
                        answers_of=lambda test: {"squares"} if "squares" in test else {"cubes"})
    notebook = powers("def squares(n):\n    x = 1\n    raise ValueError('not answered yet')")
    assert part_states(notebook, part_by_pattern(r"^(powers)_"), attempts) == {"powers": STARTED}
    notebook.cells[2].source = "raise ValueError('not answered yet')"
    assert part_states(notebook, part_by_pattern(r"^(powers)_"), attempts) == {"powers": NOT_ATTEMPTED}


def test_a_test_cell_without_an_answer_is_not_attempted_when_it_failed_for_a_stub():
    notebook = nbformat.v4.new_notebook(cells=[grade_cell("assert f() == 1", "lone", 1)])
    assert part_states(notebook, lambda t: t, failed_of=lambda t: [{"message": "NotImplementedError: "}]) == {
        "lone": NOT_ATTEMPTED}
    assert part_states(notebook, lambda t: t, failed_of=lambda t: [{"message": "AssertionError"}]) == {
        "lone": ANSWERED}
