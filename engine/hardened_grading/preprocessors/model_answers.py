"""``ModelAnswers``: each manually graded answer's model answer in the feedback, after the due date.

Where a model answer lives, in any nbgrader course: in the **source notebook** (``source/ASSIGNMENT/NOTEBOOK.ipynb``),
in the cell of the same grade id, a manually graded answer (nbgrader's ``solution`` and ``grade``). It is that
cell's source without its solution delimiter lines (``### BEGIN SOLUTION`` and ``### END SOLUTION``, as
``c.ClearSolutions`` names them): the text between them when the cell has them, which is all a student's release
loses, or the whole cell when it has none (nbgrader's documentation course writes its answers so). A rubric for
the graders can go in the same region, after the answer: the student sees it with the answer.

In the feedback, the model answer is a cell of its own, right below the student's answer, with a heading that
says so. When it shows is ``c.ModelAnswers.shown``: by default after the due date (nbgrader's gradebook, with the
student's extension), as :class:`~hardened_grading.preprocessors.feedback_summary.FeedbackSummary` shows a
failed hidden check's full message.
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


def is_graded_by_hand(cell):
    """An answer a person grades: an nbgrader solution cell that is also a grade cell (code or markdown)."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("solution")) and bool(meta.get("grade"))


def model_answer(source_cell, begin="BEGIN SOLUTION", end="END SOLUTION"):
    """The model answer in `source_cell`, the instructor's version of a manually graded answer: its source without
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


def model_answer_cell(answer, cell_type, language="python"):
    """The feedback's cell that shows `answer`, the model answer of a `cell_type` answer ("markdown" or "code")."""
    if cell_type == "code":
        fence = "````" if "```" in answer else "```"
        body = f"{fence}{language}\n{answer}\n{fence}"
    else:
        body = "\n".join(f"> {line}" if line.strip() else ">" for line in answer.split("\n"))
    return nbformat.v4.new_markdown_cell(f"**Model answer**, from your instructor:\n\n{body}")


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
    """Put the model answer of each manually graded answer below it, in the feedback (``c.GenerateFeedback``)."""

    shown = Enum(list(SHOWN), default_value="auto", help=(
        "When the feedback shows the model answer of each manually graded answer, below the student's own: "
        "'auto' once the assignment's due date in nbgrader's gradebook (with the student's extension) has passed, "
        "never when there is no due date; 'always'; 'never'. The model answer is the answer cell of the same grade "
        "id in the source notebook, without its solution delimiter lines.")).tag(config=True)
    enabled = Bool(True)  # nbconvert's preprocessors are off unless they say otherwise

    def preprocess(self, nb, resources):
        nb.cells = [cell for cell in nb.cells if MODEL_ANSWER not in engine_meta(cell)]
        answers = [cell for cell in nb.cells if is_graded_by_hand(cell)]
        if not answers or not self._shown(resources):
            return nb, resources
        models = self._models(resources)
        language = nb.metadata.get("kernelspec", {}).get("language", "python")
        cells = []
        for cell in nb.cells:
            cells.append(cell)
            if is_graded_by_hand(cell) and grade_id(cell) in models:
                shown = model_answer_cell(models[grade_id(cell)], cell.cell_type, language)
                shown.metadata[META] = {MODEL_ANSWER: grade_id(cell)}
                cells.append(shown)
        nb.cells = cells
        return nb, resources

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

    def _models(self, resources):
        """``{grade id: model answer}`` of the source notebook's manually graded answers; {} (and a warning) when
        it cannot be read."""
        from nbgrader.preprocessors import ClearSolutions

        path = source_notebook_path(self.config, resources)
        try:
            source = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        except Exception as error:
            self.log.warning("hardened_grading feedback: no model answers: the source notebook %s could not be read "
                             "(%s: %s)", path, type(error).__name__, error)
            return {}
        delimiters = ClearSolutions(config=self.config)
        return {grade_id(cell): model_answer(cell, delimiters.begin_solution_delimeter, delimiters.end_solution_delimeter)
                for cell in source.cells if is_graded_by_hand(cell) and grade_id(cell)}
