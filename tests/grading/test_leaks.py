"""Nothing a student receives gives a concept question's answer away, before or after the due date.

Every test cell of both graded assignments is judged in this process, through the real judge (as
``make notebook`` does, :mod:`posenc_course.dryrun`), for a blank, a wrong and a partly answered
submission. Each failed check is then shown as the feedback and ``posenc-check`` show it
(:func:`hardened_grading.summary.check_message`, and :class:`~hardened_grading.preprocessors.feedback_summary.FeedbackSummary` on a
graded notebook made of these results), with both settings of ``FeedbackSummary.hidden_messages``; no
text a student reads may hold the value of a concept question. The expected values are computed from
the source notebook's answer cells, never typed here. The whole module takes about a second.

Also here: the redaction itself, the due date that "auto" reads from nbgrader's gradebook, and the
messages fixed with it (an unanswered concept question, ``got`` that was never assigned, an array cut
in the middle of a number).
"""

import datetime
import json
import math

import nbformat
import numpy as np
import pytest

from hardened_grading.judge import agent
from hardened_grading.judge import judge
from hardened_grading.judge import messages as judge_messages
from hardened_grading.judge import setup as judge_setup
from hardened_grading.judge.link import record_verdict
from hardened_grading.summary import HIDDEN_MESSAGES, WITHHELD, check_message, what_was_tried
from hardened_grading.preprocessors.feedback_summary import FeedbackSummary, due_date, full_messages
from posenc_course.layout import GRADED, exercise_of, grade_id, is_answer_cell, is_test_cell, release_notebook, source_notebook

from ..helpers.leaks import (ANSWER_TABLES, assert_no_answer_in, concept_answers, feedback_texts, graded_notebook,
                             judged, leaks)


@pytest.fixture(scope="module", params=[(a, k) for a in GRADED for k in ("blank", "wrong", "partly")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def submission(request):
    assignment, kind = request.param
    return assignment, kind, judged(assignment, kind)


# The proof --------------------------------------------------------------------------------------------

def test_each_submission_fails_the_checks_it_must(submission):
    """The submissions are what they say: the concept questions that are not right fail, with messages."""
    assignment, kind, results = submission
    failed = {grade_id(cell) for cell, _, checks in results if any(not c["passed"] for c in checks)}
    concepts = concept_answers(assignment)
    expected_failures = {f"{name}_test" for number, name in enumerate(sorted(concepts))
                         if kind != "partly" or number % 3}
    assert expected_failures <= failed, expected_failures - failed
    assert len(failed) > len(concepts)


@pytest.mark.parametrize("full", [False, True], ids=["before-due", "after-due"])
def test_no_check_message_holds_a_concept_answer(submission, full):
    """What posenc-check prints and the feedback lists: every failed check's message, as a student reads it."""
    assignment, kind, results = submission
    texts = [(grade_id(cell), check_message({**check, "test": grade_id(cell)}, full))
             for cell, _, checks in results for check in checks if not check["passed"]]
    assert texts
    assert_no_answer_in(texts, assignment, f"{assignment}, {kind}, {'after' if full else 'before'} the due date")


@pytest.mark.parametrize("setting", ["before-due", "after-due"])
def test_no_feedback_holds_a_concept_answer(submission, setting):
    """The feedback preprocessor on the graded notebook: its summary, its notes and its errors."""
    assignment, kind, results = submission
    notebook, resources = FeedbackSummary(hidden_messages=setting).preprocess(
        graded_notebook(assignment, results), {})
    assert_no_answer_in(feedback_texts(notebook, resources), assignment, f"{assignment}, {kind}, {setting}")


def test_before_the_due_date_the_feedback_shows_no_hidden_checks_detail(submission):
    """What a failed hidden check expected, or got against what, is nowhere: not in the summary, the
    note that replaces the hidden tests, the grader's list of failed checks under the cell, or its error."""
    assignment, kind, results = submission
    notebook, resources = FeedbackSummary(hidden_messages="before-due").preprocess(
        graded_notebook(assignment, results), {})
    shown = " ".join(text for _, text in feedback_texts(notebook, resources))
    withheld = [check["message"] for _, _, checks in results for check in checks
                if check["hidden"] and not check["passed"] and check_message(check) != check["message"]]
    assert withheld or kind == "blank"
    for message in withheld:
        what = what_was_tried(message) or ""
        assert message[:len(what) + 25] not in shown, message


def test_the_leak_check_finds_an_answer():
    """The check above can fail: the old messages of main, and the expected array of a check_close."""
    assert leaks("ex02_tokens_with_a_row: rows exist for 0 .. 1023 only: 24 of them, not Ellipsis",
                 "ex02_tokens_with_a_row", 24, {}, own=True) == ["24"]
    assert leaks("ex08_added_parameters: 3072 new rows, 2,359,296 parameters", "ex08_added_parameters",
                 2359296, {}, own=False) == ["2,359,296"]
    assert leaks("ex06_same_score: only (12, 15) has n - m = 3", "ex06_same_score", "(12, 15)",
                 {"ex06_same_score": ["(5, 2)", "(12, 15)", "(4, 10)"]}, own=True) == ["(12, 15)"]
    assert leaks("x: expected 6283.19 got 1", "ex01_slowest_period", 2000 * math.pi, {}, own=False)
    assert not leaks("'x' is not one of the choices ['(5, 2)', '(12, 15)', '(4, 10)']", "ex06_same_score",
                     "(12, 15)", {"ex06_same_score": ["(5, 2)", "(12, 15)", "(4, 10)"]}, own=True)


# The redaction ----------------------------------------------------------------------------------------

def hidden(message, test="ex05_apply_rope_test"):
    return {"hidden": True, "message": message, "test": test, "passed": False}


@pytest.mark.parametrize("message, before", [
    ("apply_rope(x of shape (2, 4), positions [3, 5]): rotate each pair: expected [1. 2.] got [2. 1.]",
     "apply_rope(x of shape (2, 4), positions [3, 5])"),
    ("ex02_tokens_with_a_row = 30: not right. Count the positions that still have a row.",
     "ex02_tokens_with_a_row = 30"),
    ("alibi_slopes(-2): expected ValueError, but nothing was raised", "alibi_slopes(-2)"),
    ("the slopes must halve from head to head", "apply_rope"),
])
def test_before_the_due_date_a_hidden_check_says_what_it_tried_and_that_it_was_wrong(message, before):
    shown = check_message(hidden(message), full=False, part_of=exercise_of)  # as this course groups its tests
    assert shown == f"{before}: {WITHHELD}"
    assert check_message(hidden(message), full=True) == message


@pytest.mark.parametrize("message", [
    "ex02_tokens_with_a_row: not answered yet: replace the ... in its cell with your answer, and run that cell",
    "not run, because an earlier step failed (NotImplementedError: not answered yet: write this function)",
    "NotImplementedError: not answered yet: write this function here, in place of this line",
    "TypeError: apply_rope raised TypeError: unsupported operand type(s)",
    "alibi_slopes(0): the function is not implemented yet",
    "not run: the kernel died",
])
def test_messages_about_the_submissions_own_state_are_kept_whole(message):
    assert check_message(hidden(message), full=False) == message


def test_a_visible_checks_message_is_kept_whole():
    message = "apply_rope(worked example): expected [1. 2.] got [2. 1.]"
    assert check_message({"hidden": False, "message": message}, full=False) == message


def test_what_was_tried_ends_at_the_first_colon_outside_brackets():
    assert what_was_tried("f(a: 1, {b: 2}): expected 3") == "f(a: 1, {b: 2})"
    assert what_was_tried("no colon here") is None
    assert what_was_tried("ratio: 2.5:1 is the expected") == "ratio"


@pytest.mark.parametrize("setting, due, now, full", [
    ("before-due", None, None, False),
    ("after-due", None, None, True),
    ("auto", None, None, False),  # no due date: nothing is given away
    ("auto", datetime.datetime(2026, 1, 2), datetime.datetime(2026, 1, 1), False),
    ("auto", datetime.datetime(2026, 1, 2), datetime.datetime(2026, 1, 3), True),
])
def test_full_messages_follow_the_setting_and_the_due_date(setting, due, now, full):
    assert full_messages(setting, due, now) is full


def test_a_setting_that_does_not_exist_is_refused_at_once():
    from traitlets import TraitError

    with pytest.raises(TraitError):
        FeedbackSummary(hidden_messages="never")
    with pytest.raises(ValueError, match="use one of auto, before-due, after-due"):
        full_messages("later", None)
    assert HIDDEN_MESSAGES == ("auto", "before-due", "after-due")
    assert FeedbackSummary().hidden_messages == "auto"


@pytest.mark.filterwarnings("ignore:Object of type <SubmittedAssignment> not in session")  # nbgrader's own
def test_auto_reads_the_due_date_and_the_extension_from_nbgraders_gradebook(tmp_path):
    from nbgrader.api import Gradebook

    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    due = datetime.datetime(2030, 5, 1, 12, 0)
    with Gradebook(db_url) as gradebook:
        gradebook.add_assignment("posenc", duedate=due)
        gradebook.add_student("ada")
        gradebook.add_student("bob")
        gradebook.add_submission("posenc", "bob")
        gradebook.grant_extension("posenc", "bob", days=2)
    info = {"db_url": db_url, "assignment": "posenc"}
    assert due_date({"nbgrader": {**info, "student": "ada"}}) == due  # no submission: the assignment's
    assert due_date({"nbgrader": {**info, "student": "bob"}}) == due + datetime.timedelta(days=2)
    assert due_date({"nbgrader": {**info, "assignment": "other"}}) is None
    assert due_date({}) is None


# The messages fixed with it ---------------------------------------------------------------------------

def failed_messages(results, test_id):
    return [c["message"] for cell, _, checks in results if grade_id(cell) == test_id for c in checks
            if not c["passed"]]


@pytest.mark.parametrize("assignment", GRADED)
def test_an_unanswered_concept_question_says_it_is_not_answered_yet(assignment):
    results = judged(assignment, "blank")
    for name in concept_answers(assignment):
        messages = failed_messages(results, f"{name}_test")
        assert messages and all("not answered yet" in m for m in messages), (name, messages)
    everything = " ".join(c["message"] for _, _, checks in results for c in checks)
    assert "ellipsis" not in everything and "Ellipsis" not in everything


def test_no_check_says_a_name_of_the_test_is_not_defined(submission):
    """A check after a failed ``got = check_inputs_unchanged(...)`` is not run; it never says NameError."""
    _, _, results = submission
    named = [(grade_id(cell), c["message"]) for cell, _, checks in results for c in checks
             if "NameError" in c["message"]]
    assert not named, named


def test_a_long_array_is_cut_between_numbers():
    numbers = [f"{x:.6f}" for x in np.linspace(0.1234567, 9.87654321, 300)]
    message = f"f(x): expected [{' '.join(numbers)}] got [{' '.join(reversed(numbers))}]"
    shown = judge_messages.elide(message, 300)
    assert len(shown) <= 300 and " ... " in shown and " got [" in shown
    words = shown.replace("[", " ").replace("]", " ").replace(" ... ", " ").split()
    assert all(word in numbers for word in words if word[0].isdigit()), shown


# check_answer grades as the checks it replaced --------------------------------------------------------

def judge_concept(assignment, name, value):
    """The checks of the test cell of concept question `name` with the answer `value`."""
    source = nbformat.read(source_notebook(assignment), as_version=4)
    setup = judge_setup.setup_namespace(source)
    cell = next(c for c in source.cells if grade_id(c) == f"{name}_test")
    namespace = {name: value}
    the_judge = judge.Judge(lambda request: json.loads(agent.answer_text(json.dumps(request), namespace, None)))
    the_judge.run(cell.source, setup, judge_setup.cell_label(grade_id(cell)))
    return the_judge.checks


@pytest.mark.parametrize("assignment", GRADED)
def test_every_wrong_concept_answer_of_the_grading_tables_fails_and_the_reference_passes(assignment):
    tables = ANSWER_TABLES[assignment].WRONG_CONCEPTS
    answers = concept_answers(assignment)
    for label, (_, codes) in tables.items():
        for code in codes.values():
            namespace = {"math": math, "np": np}
            exec(code, namespace)
            for name in set(namespace) & set(answers):
                hidden_checks = [c for c in judge_concept(assignment, name, namespace[name]) if c.hidden]
                assert hidden_checks and not any(c.passed for c in hidden_checks), label
                assert all(f"{name} = " in c.message and "not right" in c.message for c in hidden_checks), label
    for name, value in answers.items():
        forms = [value]
        if isinstance(value, (list, tuple)):
            forms += [tuple(value), np.array(value)]
        elif not isinstance(value, str):
            forms += [np.float64(value)] + ([np.int64(value), int(value)] if float(value).is_integer() else [])
        for form in forms:
            assert all(c.passed for c in judge_concept(assignment, name, form) if c.hidden), (name, form)


def test_a_gradebook_that_cannot_be_read_gives_nothing_away(tmp_path, caplog):
    """"auto" with a broken gradebook: the feedback is made, as before the due date, and the log says why."""
    from hardened_grading.summary import summary

    broken = tmp_path / "gradebook.db"
    broken.write_text("not a database")
    results = judged("posenc", "wrong")
    resources = {"nbgrader": {"db_url": f"sqlite:///{broken}", "assignment": "posenc", "student": "ada"}}
    notebook, resources = FeedbackSummary().preprocess(graded_notebook("posenc", results), resources)
    assert WITHHELD in resources["hardened_grading"]["summary_html"]
    assert "could not read the due date" in caplog.text
    assert summary(notebook) and all(row["exercise"].startswith("ex") for row in summary(notebook, part_of=exercise_of))
