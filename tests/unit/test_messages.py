"""Messages shortened for a person (:mod:`hardened_grading.judge.messages`): on one line, cut between words, a check's
"expected ..." and "got ..." kept. In memory, no kernel."""

import pytest

from hardened_grading.judge import messages
from hardened_grading.judge.messages import elide

#: what the check of ex01's visible test says to a student whose sinusoidal_row puts sin and cos in two halves
SINUSOIDAL = ("sinusoidal_row(0, 6): interleaved, sin(0) = 0 and cos(0) = 1 in every pair:\n"
              "  expected [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]\n  got      [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]")
#: what the release's stub of a function raises (nbgrader_config.py, ClearSolutions.code_stub)
NOT_ANSWERED = "NotImplementedError: not answered yet: write this function here, in place of this line"
ROPE = ("apply_rope(x of shape (3, 4), positions [3, 5, 7]): expected [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], "
        "[0.9, 1.0, 1.1, 1.2]] got [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.9, 1.0, 1.1, 1.3]]")


@pytest.mark.parametrize("message", [SINUSOIDAL, NOT_ANSWERED, ROPE])
@pytest.mark.parametrize("limit", [30, 45, 60, 90, 120])
def test_a_message_is_cut_between_words(message, limit):
    shown = elide(message, limit)
    assert len(shown) <= limit
    assert set(shown.split()) - {"..."} <= set(message.split()), shown


@pytest.mark.parametrize("message", [SINUSOIDAL, ROPE])
@pytest.mark.parametrize("limit", [60, 90, 120])
def test_a_check_message_keeps_what_it_expected_and_what_came_back(message, limit):
    shown = elide(message, limit)
    assert " expected [" in shown and " got [" in shown, shown


def test_the_progress_cells_message_says_the_call_what_was_expected_and_what_came_back():
    shown = elide(SINUSOIDAL, 90)
    assert shown.startswith("sinusoidal_row(0, 6):") and " expected [0.0, 1.0," in shown
    assert " got [0.0, 0.0," in shown and shown.endswith("1.0]")


def test_an_error_keeps_its_type_its_first_words_and_its_last():
    assert elide(NOT_ANSWERED, 60) == "NotImplementedError: not answered ... in place of this line"


def test_a_message_that_fits_is_only_put_on_one_line():
    assert elide("f(1):\n  expected 1\n  got      2", 100) == "f(1): expected 1 got 2"


#: a reason whose 300th character falls inside a word: cut there, the person reads "... refuse"
LONG_REASON = "the kernel of student s01 died while a test cell ran: " + "its sandbox refused to write the file " * 10
assert LONG_REASON[299:301].isalpha()


def words_kept(shown, said):
    """Whether every word of `shown` (but the cut's "...") is a word of `said`: no word cut in two."""
    return set(shown.split()) - {"..."} <= set(said.split())


def test_why_a_students_grading_failed_is_cut_between_words():
    from hardened_grading.class_grading.worker import failure_reason

    reason = failure_reason({"log": f"[INFO] starting\n[ERROR] {LONG_REASON}"})
    assert len(reason) <= 300 and words_kept(reason, LONG_REASON), reason


def test_why_the_grader_stopped_a_cell_is_cut_between_words():
    from hardened_grading.incidents import _why

    why = _why({"ename": "KernelDied", "evalue": LONG_REASON})
    assert len(why) <= 300 and words_kept(why, LONG_REASON), why



@pytest.mark.parametrize("limit", [30, 60, 90, 300])
def test_the_code_a_notebook_cell_carries_shortens_as_the_engine_does(limit):
    namespace = {}
    exec(messages.SOURCE, namespace)
    assert [namespace["elide"](m, limit) for m in (SINUSOIDAL, NOT_ANSWERED, ROPE)] == \
        [elide(m, limit) for m in (SINUSOIDAL, NOT_ANSWERED, ROPE)]
