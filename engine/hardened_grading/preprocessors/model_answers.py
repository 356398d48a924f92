"""``ModelAnswers``: each written or manually graded answer's model answer in the feedback, after the due date.

The answers that get one are those a person reads: a written answer (a markdown solution cell, graded by hand or
not graded) and a code answer graded by hand (a solution cell that is also a grade cell). An autograded answer gets
none: its tests grade it.

Where a model answer lives, in any nbgrader course: in the **source notebook** (``source/ASSIGNMENT/NOTEBOOK.ipynb``),
in the cell of the same grade id. It is that
cell's source without its solution delimiter lines (``### BEGIN SOLUTION`` and ``### END SOLUTION``, as
``c.ClearSolutions`` names them): the text between them when the cell has them, which is all a student's release
loses, or the whole cell when it has none (nbgrader's documentation course writes its answers so). A rubric for
the graders can go in the same region, after the answer: the student sees it with the answer.

In the feedback (:class:`ModelAnswers`, in ``c.GenerateFeedback.preprocessors``), the model answer is a cell of its
own, right below the student's answer, with a heading that says so. When it shows is ``c.ModelAnswers.shown``: by
default after the due date (nbgrader's gradebook, with the student's extension), as
:class:`~hardened_grading.preprocessors.feedback_summary.FeedbackSummary` shows a failed hidden check's full message.

For the graders (:class:`ModelAnswersForGraders`, last in ``c.Autograde.autograde_preprocessors``), the graded
notebook has the same cell below each such answer, headed for the grader: formgrader shows it under the student's
text, beside the score box, so that a TA grades against the model answer and its rubric without leaving the page.
The feedback never shows that cell as it is: :class:`ModelAnswers` takes it out first, and puts the student's own
below the answer when the due date says so.
"""

from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Enum

from ..cells import META, engine_meta, grade_id, nbgrader_meta
from .feedback_summary import due_date, utc_now

#: ``META.model_answer`` of a cell this preprocessor put in: the grade id of the answer it follows.
MODEL_ANSWER = "model_answer"
SHOWN = ("auto", "always", "never")


def is_read_by_a_person(cell):
    """An answer a person reads: a written answer (a markdown solution cell, graded by hand or not) or a code answer
    graded by hand (a solution cell that is also a grade cell); not an autograded answer."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("solution")) and (cell.get("cell_type") == "markdown" or bool(meta.get("grade")))


def model_answer(source_cell, begin="BEGIN SOLUTION", end="END SOLUTION"):
    """The model answer in `source_cell`, the instructor's version of an answer read by a person: its source without
    the lines that hold the solution delimiters `begin` and `end` (found as nbgrader's ``ClearSolutions`` finds
    them, anywhere in a line), stripped of blank lines around it.

    Examples
    --------
    >>> cell = nbformat.v4.new_markdown_cell("### BEGIN SOLUTION\\nNo: the slow pairs never turned so far.\\n"
    ...                                      "### END SOLUTION")
    >>> model_answer(cell)
    'No: the slow pairs never turned so far.'
    >>> model_answer(nbformat.v4.new_markdown_cell("$\\\\sum_{i=1}^n i^2$"))
    '$\\\\sum_{i=1}^n i^2$'
    """
    lines = [line for line in source_cell.source.split("\n") if begin not in line and end not in line]
    return "\n".join(lines).strip("\n")


#: The heading of the model answer's cell: in the feedback, and in the graded notebook that formgrader shows.
STUDENT_HEADING = "**Model answer**, from your instructor:"
GRADER_HEADING = ("**Model answer, for the grader** (from the source notebook; the student sees it in the feedback "
                  "after the due date):")


def model_answer_cell(answer, cell_type, language="python", heading=STUDENT_HEADING):
    """The cell that shows `answer`, the model answer of a `cell_type` answer ("markdown" or "code"), under
    `heading`."""
    if cell_type == "code":
        fence = "````" if "```" in answer else "```"
        body = f"{fence}{language}\n{answer}\n{fence}"
    else:
        body = "\n".join(f"> {line}" if line.strip() else ">" for line in answer.split("\n"))
    return nbformat.v4.new_markdown_cell(f"{heading}\n\n{body}")


def with_model_answers(nb, models, heading):
    """`nb` with, below each answer read by a person whose grade id `models` (``{grade id: model answer}``) holds,
    a cell that shows it under `heading`, marked as :data:`MODEL_ANSWER` in the engine's metadata; every such cell
    that `nb` had is taken out first."""
    cells = []
    language = nb.metadata.get("kernelspec", {}).get("language", "python")
    for cell in nb.cells:
        if MODEL_ANSWER in engine_meta(cell):
            continue
        cells.append(cell)
        if is_read_by_a_person(cell) and grade_id(cell) in models:
            shown = model_answer_cell(models[grade_id(cell)], cell.cell_type, language, heading)
            shown.metadata[META] = {MODEL_ANSWER: grade_id(cell)}
            cells.append(shown)
    nb.cells = cells
    return nb


def source_models(config, resources, log):
    """``{grade id: model answer}`` of the source notebook's answers read by a person (the source notebook of the
    notebook that `resources` names, by nbgrader's settings in `config`); {} and a warning on `log` when it cannot
    be read."""
    from nbgrader.preprocessors import ClearSolutions

    path = source_notebook_path(config, resources)
    try:
        source = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    except Exception as error:
        log.warning("hardened_grading: no model answers: the source notebook %s could not be read (%s: %s)",
                    path, type(error).__name__, error)
        return {}
    delimiters = ClearSolutions(config=config)
    return {grade_id(cell): model_answer(cell, delimiters.begin_solution_delimeter, delimiters.end_solution_delimeter)
            for cell in source.cells if is_read_by_a_person(cell) and grade_id(cell)}


def source_notebook_path(config, resources):
    """The source notebook that a feedback notebook was released from, by nbgrader's course directory settings
    (`config`) and the names in `resources` (``nbgrader.assignment`` and ``nbgrader.notebook``); None without them."""
    from nbgrader.coursedir import CourseDirectory

    info = (resources or {}).get("nbgrader", {})
    if not info.get("assignment") or not info.get("notebook"):
        return None
    coursedir = CourseDirectory(config=config)
    return Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"])) / f"{info['notebook']}.ipynb"


class ModelAnswers(Preprocessor):
    """Put the model answer of each written or hand-graded answer below it, in the feedback (``c.GenerateFeedback``)."""

    shown = Enum(list(SHOWN), default_value="auto", help=(
        "When the feedback shows the model answer of each written answer (a markdown solution cell) and each "
        "code answer graded by hand, below the student's own: "
        "'auto' once the assignment's due date in nbgrader's gradebook (with the student's extension) has passed, "
        "never when there is no due date; 'always'; 'never'. The model answer is the answer cell of the same grade "
        "id in the source notebook, without its solution delimiter lines.")).tag(config=True)
    enabled = Bool(True)  # nbconvert's preprocessors are off unless they say otherwise

    def preprocess(self, nb, resources):
        answers = any(is_read_by_a_person(cell) for cell in nb.cells)
        shown = answers and self._shown(resources)
        return with_model_answers(nb, source_models(self.config, resources, self.log) if shown else {},
                                  STUDENT_HEADING), resources

    def _shown(self, resources):
        if self.shown != "auto":
            return self.shown == "always"
        try:
            due = due_date(resources)
        except Exception as error:  # a gradebook that cannot be read gives nothing away
            self.log.warning("hardened_grading feedback: could not read the due date from the gradebook (%s: %s); "
                             "no model answer is shown. Set c.ModelAnswers.shown to 'always' to show them.",
                             type(error).__name__, error)
            return False
        return due is not None and utc_now() >= due


class ModelAnswersForGraders(Preprocessor):
    """Put the model answer of each written or hand-graded answer below it, headed for the grader, in the graded
    notebook that formgrader shows (last in ``c.Autograde.autograde_preprocessors``)."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        if not any(is_read_by_a_person(cell) for cell in nb.cells):
            return nb, resources
        return with_model_answers(nb, source_models(self.config, resources, self.log), GRADER_HEADING), resources
