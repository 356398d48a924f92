"""``ModelAnswers`` (engine/hardened_grading/preprocessors/model_answers.py) on in-memory notebooks, called as
nbconvert calls a preprocessor: which answers get a model answer, what it holds, and when. A real ``generate_feedback`` of a foreign course, before and after its due
date, is tests/grading/test_feedback_model_answers.py."""

import logging

import nbformat
import pytest
from traitlets.config import Config

from hardened_grading.cells import META
from hardened_grading.preprocessors.model_answers import (GRADER_HEADING, MODEL_ANSWER, STUDENT_HEADING, ModelAnswers,
                                                          ModelAnswersForGraders, model_answer)


def cell(kind, source, grade_id, **meta):
    new = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    made = new(source)
    made.metadata["nbgrader"] = {"grade_id": grade_id, "schema_version": 3, "locked": False, **meta}
    return made


def course_with(folder, source_cells):
    """A course folder whose source notebook ``source/a1/nb.ipynb`` holds `source_cells`; return its Config."""
    (folder / "source" / "a1").mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=source_cells), folder / "source" / "a1" / "nb.ipynb")
    config = Config()
    config.CourseDirectory.root = str(folder)
    return config


RESOURCES = {"nbgrader": {"assignment": "a1", "notebook": "nb", "student": "s1"}}  # no gradebook: no due date
WRITTEN = cell("markdown", "Why?\n\n### BEGIN SOLUTION\nBecause the slow pairs never turned so far.\n"
                           "*Rubric*: 1 point for the reason.\n### END SOLUTION", "why", solution=True, grade=True,
               points=2)
CODE = cell("code", "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION", "f", solution=True,
            grade=True, points=1)
UNGRADED = cell("markdown", "### BEGIN SOLUTION\nIt costs memory.\n### END SOLUTION", "cost", solution=True, grade=False)
AUTOGRADED = cell("code", "def g(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION", "g", solution=True,
                  grade=False)
TESTS = cell("code", "assert f(1) == 2", "f_test", grade=True, solution=False, points=1)


def student_notebook():
    return nbformat.v4.new_notebook(cells=[
        cell("markdown", "My own answer: it just works.", "why", solution=True, grade=True, points=2),
        cell("code", "def f(x):\n    return x + x", "f", solution=True, grade=True, points=1),
        cell("code", "def g(x):\n    return x", "g", solution=True, grade=False),
        cell("code", "assert f(1) == 2", "f_test", grade=True, solution=False, points=1),
        cell("markdown", "*Write your answer here.*", "cost", solution=True, grade=False)])


def test_a_model_answer_is_the_source_cell_without_its_delimiter_lines():
    assert model_answer(WRITTEN) == "Why?\n\nBecause the slow pairs never turned so far.\n*Rubric*: 1 point for the reason."
    assert model_answer(CODE) == "def f(x):\n    return 2 * x"
    whole = cell("markdown", "\n$\\sum_{i=1}^n i^2$\n", "eq", solution=True, grade=True, points=1)
    assert model_answer(whole) == "$\\sum_{i=1}^n i^2$", "no delimiters: the whole cell (nbgrader's docs course)"
    custom = cell("markdown", "<!-- ANSWER -->\nYes.\n<!-- /ANSWER -->", "c", solution=True, grade=True, points=1)
    assert model_answer(custom, "<!-- ANSWER -->", "<!-- /ANSWER -->") == "Yes."


def test_always_puts_each_written_or_hand_graded_answers_model_answer_right_below_it(tmp_path):
    config = course_with(tmp_path, [WRITTEN, CODE, AUTOGRADED, TESTS, UNGRADED])
    config.ModelAnswers.shown = "always"
    shown, _ = ModelAnswers(config=config)(student_notebook(), RESOURCES)
    kinds = [(c.cell_type, c.metadata.get("nbgrader", {}).get("grade_id"), c.metadata.get(META, {}).get(MODEL_ANSWER))
             for c in shown.cells]
    assert kinds == [("markdown", "why", None), ("markdown", None, "why"), ("code", "f", None), ("markdown", None, "f"),
                     ("code", "g", None), ("code", "f_test", None), ("markdown", "cost", None), ("markdown", None, "cost")
                     ], "a written answer, graded or not, and a code answer graded by hand; not an autograded one nor a test"
    assert shown.cells[-1].source.endswith("> It costs memory.")
    written, code = shown.cells[1].source, shown.cells[3].source
    assert written.startswith("**Model answer**") and "> Because the slow pairs never turned so far." in written
    assert "```python\ndef f(x):\n    return 2 * x\n```" in code
    assert "BEGIN SOLUTION" not in written + code


def test_run_again_it_shows_each_model_answer_once(tmp_path):
    config = course_with(tmp_path, [WRITTEN, CODE])
    config.ModelAnswers.shown = "always"
    once, _ = ModelAnswers(config=config)(student_notebook(), RESOURCES)
    twice, _ = ModelAnswers(config=config)(once, RESOURCES)
    assert [c.source for c in twice.cells] == [c.source for c in once.cells]
    config.ModelAnswers.shown = "never"
    hidden, _ = ModelAnswers(config=config)(once, RESOURCES)
    assert not any(MODEL_ANSWER in c.metadata.get(META, {}) for c in hidden.cells), "a model answer put in earlier goes"


@pytest.mark.parametrize("shown", ["never", "auto"])
def test_never_and_auto_without_a_due_date_show_none(tmp_path, shown):
    config = course_with(tmp_path, [WRITTEN, CODE])
    config.ModelAnswers.shown = shown
    notebook = student_notebook()
    result, _ = ModelAnswers(config=config)(notebook, RESOURCES)
    assert [c.source for c in result.cells] == [c.source for c in student_notebook().cells]


def test_a_missing_source_notebook_is_said_and_the_feedback_still_made(tmp_path, caplog):
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    config.ModelAnswers.shown = "always"
    with caplog.at_level(logging.WARNING):
        result, _ = ModelAnswers(config=config)(student_notebook(), RESOURCES)
    assert len(result.cells) == 5
    assert "no model answers" in caplog.text and str(tmp_path / "source" / "a1" / "nb.ipynb") in caplog.text


def test_a_code_answer_holding_a_fence_is_shown_whole(tmp_path):
    fenced = cell("code", 'def h():\n    return """```"""', "h", solution=True, grade=True, points=1)
    config = course_with(tmp_path, [fenced])
    config.ModelAnswers.shown = "always"
    student = nbformat.v4.new_notebook(cells=[cell("code", "def h():\n    return 1", "h", solution=True, grade=True,
                                                   points=1)])
    result, _ = ModelAnswers(config=config)(student, RESOURCES)
    assert result.cells[1].source.endswith('````python\ndef h():\n    return """```"""\n````')


def test_the_graders_view_has_each_model_answer_headed_for_the_grader_and_the_feedback_replaces_it(tmp_path):
    """ModelAnswersForGraders (autograde) puts the model answer below each answer a person reads, headed for the
    grader, whatever the due date; the feedback's ModelAnswers takes those cells out, and puts its own in only when
    the due date says so."""
    config = course_with(tmp_path, [WRITTEN, CODE, UNGRADED])
    graded, _ = ModelAnswersForGraders(config=config)(student_notebook(), RESOURCES)
    marked = [c for c in graded.cells if MODEL_ANSWER in c.metadata.get(META, {})]
    assert [c.metadata[META][MODEL_ANSWER] for c in marked] == ["why", "f", "cost"]
    assert all(c.source.startswith(GRADER_HEADING) for c in marked)
    assert "*Rubric*: 1 point for the reason." in marked[0].source, "the rubric is in the region, for the grader"
    config.ModelAnswers.shown = "never"
    before, _ = ModelAnswers(config=config)(nbformat.from_dict(graded), RESOURCES)
    assert [c.source for c in before.cells] == [c.source for c in student_notebook().cells], "none before the due date"
    config.ModelAnswers.shown = "always"
    after, _ = ModelAnswers(config=config)(nbformat.from_dict(graded), RESOURCES)
    shown = [c.source for c in after.cells if MODEL_ANSWER in c.metadata.get(META, {})]
    assert len(shown) == 3 and all(text.startswith(STUDENT_HEADING) for text in shown), "the student's, once each"
