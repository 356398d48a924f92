"""The feedback's summary of a course that is not this one: one row per test cell unless the course groups
them (``FeedbackSummary.part_pattern``), a bare ``assert`` that failed said by its line, and the points graded
by hand said apart. On in-memory notebooks, as nbgrader's autograde leaves them (no kernel)."""

import nbformat
import pytest

from hardened_grading.preprocessors.feedback_summary import FeedbackSummary, points_by_hand
from hardened_grading.summary import each_test_cell, failed_assert, part_by_pattern, summary
from hardened_grading import summary as summary_module

from ..helpers.cells import grade_cell, nbgrader_cell

IPYTHON_TRACEBACK = [  # what IPython's kernel sends for a failed bare assert: colours, context lines after the arrow
    "\x1b[0;31mAssertionError\x1b[0m  Traceback (most recent call last)",
    "Cell \x1b[0;32mIn[6], line 2\x1b[0m\n\x1b[1;32m      1\x1b[0m x = 1\n"
    "\x1b[0;32m----> 2\x1b[0m \x1b[38;5;28;01massert\x1b[39;00m squares(1) == [1]\n"
    "\x1b[1;32m      3\x1b[0m \x1b[38;5;28;01massert\x1b[39;00m squares(2) == [1, 4]",
    "\x1b[0;31mAssertionError\x1b[0m: ",
]


@pytest.mark.parametrize("traceback, said", [
    (IPYTHON_TRACEBACK, "failed: assert squares(1) == [1]"),
    (["Traceback (most recent call last):", '  File "<cell>", line 1, in <module>', "    assert a == 1",
      "AssertionError"], "failed: assert a == 1"),
    ([], "an assert failed"),
], ids=["IPython's arrow line, not the line after it", "a plain traceback", "no traceback"])
def test_a_bare_assert_that_failed_is_said_by_its_line(traceback, said):
    assert failed_assert({"ename": "AssertionError", "evalue": "", "traceback": traceback}) == said


def graded_notebook():
    """nbgrader's documentation course's problem 1, as ``generate_feedback`` reads it (``GetGrades`` put each grade
    cell's score in its metadata): one test cell failed on a bare assert."""
    def test(name, points, outputs=()):
        cell = grade_cell("assert squares(1) == [1]", name, points, score=0.0 if outputs else points)
        cell.outputs = list(outputs)
        return cell
    failed = nbformat.v4.new_output("error", ename="AssertionError", evalue="", traceback=IPYTHON_TRACEBACK)
    by_hand = nbgrader_cell("markdown", "$x^2$", grade=True, solution=True, grade_id="equation", points=1)
    task = nbgrader_cell("markdown", "Part E", task=True, grade_id="e", points=4)
    return nbformat.v4.new_notebook(cells=[test("correct_squares", 1, [failed]), test("squares_invalid_input", 1),
                                           by_hand, task])


def test_a_foreign_course_gets_a_row_per_test_cell_and_its_failure_said():
    rows = summary(graded_notebook())
    assert [(r["exercise"], r["score"], r["max_score"]) for r in rows] == \
        [("correct_squares", 0.0, 1.0), ("squares_invalid_input", 1.0, 1.0)]
    assert [f["message"] for f in rows[0]["failed"]] == ["failed: assert squares(1) == [1]"]


def test_a_course_groups_its_test_cells_by_a_pattern():
    rows = summary(graded_notebook(), part_of=part_by_pattern(r"^([a-z]+)_"))
    assert [(r["exercise"], r["max_score"]) for r in rows] == [("correct", 1.0), ("squares", 1.0)]
    assert part_by_pattern("") is each_test_cell and part_by_pattern(r"^(ex\d+)_")("other") == "other"


def test_points_graded_by_hand_are_said_apart():
    notebook = graded_notebook()
    assert points_by_hand(notebook) == 5
    _, resources = FeedbackSummary(hidden_messages="after-due").preprocess(notebook, {})
    html = resources["hardened_grading"]["summary_html"]
    assert "Summary: 1 of 2 points" in html and "other 5 points are graded by hand" in html
    assert "<th>test</th>" in html and "The points of each test," in html  # a row is a test cell
    _, resources = FeedbackSummary(part_pattern=r"^([a-z]+)_", part_name="problem").preprocess(graded_notebook(), {})
    html = resources["hardened_grading"]["summary_html"]
    assert "<th>problem</th>" in html and "<b>correct</b>" in html and "<b>squares</b>" in html


@pytest.mark.parametrize("test_id, part_of, name", [
    ("correct_squares", None, "correct_squares"),
    ("ex05_apply_rope_test", part_by_pattern(r"^([^_]+)_"), "apply_rope"),
    ("ex05_apply_rope_test", None, "ex05_apply_rope"),
    ("squares", part_by_pattern(r"^([^_]+)_"), "squares"),
], ids=["a test cell its own part", "a course's exercise prefix", "no pattern", "no match"])
def test_what_a_test_cell_tests_is_its_grade_id_without_its_part(test_id, part_of, name):
    assert summary_module.tested_name(test_id, part_of) == name  # imported by name, pytest would collect it as a test


def judged_cell(source, checks, grade_id="ex02_add_positions_test", points=2):
    """A test cell the judge graded: its `checks` as it records them (line, hidden, passed, message)."""
    cell = grade_cell(source, grade_id, points)
    cell.metadata["hardened_grading"] = {"checks": [{"line": line, "text": "", "weight": 1.0, "hidden": hidden,
                                                     "passed": passed, "message": message}
                                                    for line, hidden, passed, message in checks]}
    return cell


HIDDEN_SOURCE = "check_true(add_positions(1) == 1, 'visible')\n### BEGIN HIDDEN TESTS\ncheck_true(0, 'x')\n" \
                "### END HIDDEN TESTS"


@pytest.mark.parametrize("hidden_checks, note", [
    ([(3, True, False, "not run: the tests could not be run")], "# hidden tests: 1 check, 0 passed"),
    ([(3, True, True, "")] * 2, "# hidden tests: 2 checks, 2 passed"),
], ids=["one check", "two checks"])
def test_the_hidden_tests_note_says_check_in_the_singular_for_one(hidden_checks, note):
    cell = judged_cell(HIDDEN_SOURCE, [(1, False, True, ""), *hidden_checks])
    summary_module.hide_hidden_tests(cell)
    assert cell.source.splitlines()[1] == note


#: what the judge records for each check of a test cell whose kernel an endless loop stopped
ENDLESS = "not run: the submission's code took over 10 s here (an endless loop?)"
#: what it records for each check after the first, of a function left as the release's stub
EARLIER = "not run, because an earlier step failed (NotImplementedError: not answered yet)"


def endless_notebook():
    """ex02: a visible check that failed on the stub, 3 more after it; 16 hidden checks an endless loop stopped."""
    visible = [(1, False, False, "NotImplementedError: not answered yet"), *[(n, False, False, EARLIER)
                                                                             for n in (2, 3, 4)]]
    hidden = [(6, True, False, ENDLESS)] * 16
    cell = judged_cell(HIDDEN_SOURCE, [*visible, *hidden], points=4)
    cell.metadata["nbgrader"]["score"] = 0.0
    return nbformat.v4.new_notebook(cells=[cell])


def test_the_summary_says_repeated_failures_once_with_how_many_checks_they_stand_for():
    rows = summary(endless_notebook(), part_of=part_by_pattern(r"^(ex\d+)_"))
    said = [(f["message"], f["hidden"], f["count"]) for f in rows[0]["failed"]]
    assert said == [("NotImplementedError: not answered yet", False, 1), (EARLIER, False, 3), (ENDLESS, True, 16)]
    page = summary_module.summary_html(rows)
    assert page.count("an endless loop?") == 1 and "<code>add_positions</code> (16 hidden checks): " in page, page
    assert "<code>add_positions</code> (3 checks): not run, because an earlier step failed" in page, page
    assert "<td>20</td>" in page  # the failed checks of the row, all counted
    text = summary_module.summary_text(rows)
    assert text.count("an endless loop?") == 1 and "add_positions (16 hidden checks): not run: " in text, text


def test_the_hidden_tests_note_says_repeated_failures_once():
    cell = endless_notebook().cells[0]
    summary_module.hide_hidden_tests(cell)
    failed = [line for line in cell.source.splitlines() if line.startswith("#   FAILED")]
    assert failed == [f"#   FAILED (16 checks): {ENDLESS}"], cell.source



def test_a_repeated_hidden_failure_under_a_test_cell_is_redacted_before_the_due_date():
    message = "add_positions(tokens of shape (2, 3)): expected [[1, 2, 3], [4, 5, 6]] got [[1, 2, 3], [4, 5, 7]]"
    cell = judged_cell(HIDDEN_SOURCE, [(1, False, True, ""), *[(3, True, False, message)] * 3])
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"0 of 3 checks passed\n"
                                                                          f"  FAILED (3 hidden checks): {message}\n")]
    summary_module.hide_hidden_tests(cell)
    assert cell.outputs[0]["text"].splitlines()[1] == \
        f"  FAILED (3 hidden checks): add_positions(tokens of shape (2, 3)): {summary_module.WITHHELD}"


def feedback_page(score, max_score):
    """The feedback page of an empty notebook graded `score` of `max_score`, as generate_feedback renders it."""
    from pathlib import Path

    import nbgrader
    from traitlets.config import Config

    from hardened_grading.exporters.feedback_html import SummaryFirstHTMLExporter

    config = Config()
    config.HTMLExporter.extra_template_paths = [str(Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
                                                    / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
    resources = {"nbgrader": {"notebook": "exercises", "score": score, "max_score": max_score, "late_penalty": 0}}
    return SummaryFirstHTMLExporter(config=config).from_notebook_node(nbformat.v4.new_notebook(), resources)[0]


@pytest.mark.parametrize("score, max_score, heading", [
    (13.33, 79.0, "exercises (Score: 13.33 / 79)"),
    (79.0, 79.0, "exercises (Score: 79 / 79)"),
    (0, 79.5, "exercises (Score: 0 / 79.5)"),
])
def test_the_feedback_heading_says_the_score_as_the_summary_does(score, max_score, heading):
    """The summary says "13.33 of 79 points" (``:g``); nbgrader's heading said "Score: 13.33 / 79.0"."""
    assert f"<h4>{heading}</h4>" in feedback_page(score, max_score)
