"""Whether a student attempted a part of a notebook: the one definition every report of the engine, and a course's
own, uses.

An answer cell (nbgrader's solution cell) is a *stub* while its source is the release's: the same as the release
notebook's cell of its grade id (up to blank space at its ends), else, without the release, the checksum nbgrader
stores in its metadata (``generate_assignment`` computes it of the stub; ``autograde`` puts it back from the
gradebook; nbgrader itself reads it so to score an unchanged manually graded answer 0). A course whose stubs say
words of their own may tell a stub by those (:class:`Attempts` ``is_stub``).

A test cell tests the answer cells just above it (:func:`answers_above`), or those a course names. A part (the
test cells that a part pattern groups: an exercise) is

- *not attempted* (:data:`NOT_ATTEMPTED`) when every answer its test cells test is still the stub;
- *started* (:data:`STARTED`) when at least one is the student's and at least one is still the stub;
- *answered* (:data:`ANSWERED`) when none is a stub.

A test cell without a known answer cell is not attempted when it failed and each of its failures says the stub's
words (nbgrader's own stub raises ``NotImplementedError``), else answered.

    states = part_states(notebook, part_of=exercise_of)      # {"ex01": "answered", "ex02": "not attempted", ...}
"""

from dataclasses import dataclass
from typing import Callable

from .cells import grade_id, is_answer_cell, is_test_cell, nbgrader_meta

NOT_ATTEMPTED = "not attempted"  #: every answer still the stub
STARTED = "started"  #: some answers the student's, some still the stub
ANSWERED = "answered"  #: no answer is a stub
NOT_IMPLEMENTED = "NotImplementedError"  #: what nbgrader's own stub raises (``ClearSolutions.code_stub``)


@dataclass(frozen=True)
class Attempts:
    """How a course tells a stub from an answer, and which answers a test cell tests.

    Attributes
    ----------
    is_stub : callable or None
        ``is_stub(source)``: whether an answer cell's source is still the release's stub. None (the default):
        whether it is unchanged from the release (:func:`unchanged_from_release`).
    answers_of : callable or None
        ``answers_of(test id)``: the grade ids of the answer cells a test cell tests. None (the default): the
        answer cells just above it in the notebook (:func:`answers_above`), as nbgrader's notebooks lay out an
        answer and its tests.
    not_answered : str
        A failed check whose message holds this text failed because of a stub: nbgrader's own stub raises
        ``NotImplementedError``; a course whose stubs say something of their own gives that.
    checks_only : bool
        For the class report: read only the checks the trusted judge recorded; a test cell without any is no
        mistake. Off (the default), such a cell's error output is its one failed check.
    """

    is_stub: Callable | None = None
    answers_of: Callable | None = None
    not_answered: str = NOT_IMPLEMENTED
    checks_only: bool = False


def release_sources(release_notebook):
    """``{grade id: source}`` of the answer cells of `release_notebook` (nbformat's), each without blank space at
    its ends: what a student who did not attempt an answer still has."""
    return {grade_id(cell): cell.source.strip() for cell in release_notebook.cells if is_answer_cell(cell)}


def unchanged_from_release(cell, released=None):
    """Whether the answer `cell` is still the release's: its source is `released`'s of its grade id (``{grade id:
    source}``, :func:`release_sources`), up to blank space at its ends; for a grade id not there, its checksum is
    the one nbgrader stored in its metadata. A cell with neither is the student's."""
    from nbgrader.utils import compute_checksum

    if released and grade_id(cell) in released:
        return cell.source.strip() == released[grade_id(cell)]
    stored = nbgrader_meta(cell).get("checksum")
    return stored is not None and stored == compute_checksum(cell)


def stub_answers(notebook, attempts=Attempts(), released=None):
    """The grade ids of `notebook`'s answer cells that are still stubs: ``attempts.is_stub`` of their source when
    the course gives one, else :func:`unchanged_from_release` (`released`: ``{grade id: source}`` of the release)."""
    if attempts.is_stub is not None:
        return {grade_id(c) for c in notebook.cells if is_answer_cell(c) and attempts.is_stub(c.source)}
    return {grade_id(c) for c in notebook.cells if is_answer_cell(c) and unchanged_from_release(c, released)}


def answers_above(cells, index):
    """The grade ids of the answer cells just above the test cell ``cells[index]``: those between it and the test
    cells before them (``squares`` for both ``correct_squares`` and ``squares_invalid_input`` below it)."""
    found, position = [], index - 1
    while position >= 0 and is_test_cell(cells[position]):
        position -= 1
    while position >= 0 and not is_test_cell(cells[position]):
        if is_answer_cell(cells[position]):
            found.append(grade_id(cells[position]))
        position -= 1
    return set(found)


def tested_answers(notebook, attempts=Attempts()):
    """``{test id: {answer id, ...}}``: the answer cells of `notebook` each test cell tests (``attempts.answers_of``,
    else :func:`answers_above`), only those in the notebook."""
    present = {grade_id(c) for c in notebook.cells if is_answer_cell(c)}
    return {grade_id(cell): set(attempts.answers_of(grade_id(cell)) if attempts.answers_of
                                else answers_above(notebook.cells, number)) & present
            for number, cell in enumerate(notebook.cells) if is_test_cell(cell)}


def answers_state(answers, stubs):
    """:data:`NOT_ATTEMPTED`, :data:`STARTED` or :data:`ANSWERED`: how many of `answers` (grade ids) are in
    `stubs`: all, some or none. None for no answers."""
    answers = set(answers)
    if not answers:
        return None
    still = answers & set(stubs)
    return NOT_ATTEMPTED if still == answers else STARTED if still else ANSWERED


def combined_state(states):
    """The state of a part from those of its test cells: not attempted when all are, answered when all are, else
    started."""
    states = set(states)
    return next(iter(states)) if len(states) == 1 else STARTED


def failed_for_a_stub(failed, attempts=Attempts()):
    """Whether each of the `failed` checks (``{"message": ...}``, at least one) says the stub's words."""
    return bool(failed) and all(attempts.not_answered in str(check["message"]) for check in failed)


def cell_state(answers, stubs, failed=(), attempts=Attempts()):
    """The state of one test cell: that of its `answers` (:func:`answers_state`); for a cell without a known
    answer, not attempted when its `failed` checks all say the stub's words, else answered."""
    state = answers_state(answers, stubs)
    if state is not None:
        return state
    return NOT_ATTEMPTED if failed_for_a_stub(failed, attempts) else ANSWERED


def part_states(notebook, part_of, attempts=Attempts(), released=None, failed_of=None):
    """``{part: state}`` of `notebook` (a student's: submitted, or graded): each part (``part_of(test id)``) that
    has a test cell, :data:`NOT_ATTEMPTED`, :data:`STARTED` or :data:`ANSWERED` (:func:`combined_state` of its test
    cells' :func:`cell_state`).

    Parameters
    ----------
    part_of : callable
        ``part_of(grade id)``: the part a test cell belongs to.
    attempts : Attempts
        How the course tells a stub, and which answers a test cell tests.
    released : dict or None
        ``{grade id: source}`` of the release's answer cells (:func:`release_sources`), for ``attempts.is_stub``
        None; without it, nbgrader's checksums say.
    failed_of : callable or None
        ``failed_of(test id)``: the failed checks of a test cell, for those without a known answer cell.
    """
    stubs = stub_answers(notebook, attempts, released)
    states = {}
    for test, answers in tested_answers(notebook, attempts).items():
        failed = failed_of(test) if failed_of else ()
        states.setdefault(part_of(test), []).append(cell_state(answers, stubs, failed, attempts))
    return {part: combined_state(each) for part, each in states.items()}
