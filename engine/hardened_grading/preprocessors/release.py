"""What ``nbgrader generate_assignment`` does differently for this course: stubs a student can run.

nbgrader replaces every solution region with one code stub, ``raise NotImplementedError()``. Inside a
function that is right: the function exists, and calling it says it is not written yet. But a concept
question's answer is a top-level assignment, and a top-level ``raise`` stops *Run All* at the first
question, and leaves the answer's name undefined, so that its test cell fails with a ``NameError``.

:class:`AnswerStubs` (configured in ``nbgrader_config.py`` in place of nbgrader's ``ClearSolutions``)
therefore gives a region at the top level of a cell that only assigns names one line per name,
``name = ...  # YOUR ANSWER HERE``. The ``...`` (Ellipsis) is what the check helpers call "not
answered yet". Every other region gets nbgrader's stub, whose message is set in ``nbgrader_config.py``.

A written answer (a markdown cell graded by hand: nbgrader's manually graded answer) gets a stub that says what it
is worth, from its points: :attr:`AnswerStubs.written_stub`, or :attr:`AnswerStubs.ungraded_written_stub` at 0 points.
``c.AnswerStubs.grade_written_answers = False`` makes every written answer worth 0 points: still released,
collected and shown with its model answer in the feedback, but graded by nobody and out of every total.
"""

import ast
import re

from nbconvert.preprocessors import Preprocessor
from nbgrader.preprocessors import ClearSolutions
from traitlets import Bool, Unicode

from ..cells import nbgrader_meta


def assigned_names(code):
    """The names a piece of top-level code assigns, in order, if that is all it does; else None."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    names = []
    for statement in body:
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, ast.AnnAssign) else None)
        if not targets or not all(isinstance(target, ast.Name) for target in targets):
            return None
        names += [target.id for target in targets if target.id not in names]
    return names or None


class AnswerStubs(ClearSolutions):
    """nbgrader's ClearSolutions, except that a top-level answer becomes ``name = ...  # YOUR ANSWER HERE``."""

    answer_stub = Unicode(
        "{name} = ...  # YOUR ANSWER HERE",
        help="The stub of a top-level solution region that only assigns names: one line per name, "
             "{name} replaced by it. Leave the Ellipsis: the check helpers say 'not answered yet' for it.",
    ).tag(config=True)

    grade_written_answers = Bool(True, help=(
        "Whether the written answers (markdown cells graded by hand: nbgrader's manually graded answers) are graded. "
        "False: each is worth 0 points in the release and the gradebook; it is still released, collected, shown in "
        "formgrader and followed by its model answer in the feedback (c.ModelAnswers), and adds nothing to any total. "
        "Run generate_assignment again after changing it.")).tag(config=True)
    written_stub = Unicode(
        "*Write your answer here.* ({points:g} points, graded by hand; the model answer and what earns its points "
        "come with your feedback after the due date.)",
        help="The stub of a written answer worth points, {points} replaced by them.").tag(config=True)
    ungraded_written_stub = Unicode(
        "*Write your answer here.* (Not graded; the model answer comes with your feedback after the due date.)",
        help="The stub of a written answer worth 0 points (grade_written_answers = False).").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        meta = nbgrader_meta(cell)
        if cell.cell_type == "markdown" and meta.get("grade") and meta.get("solution") and not self.grade_written_answers:
            meta["points"] = 0
        return super().preprocess_cell(cell, resources, index)

    def _replace_solution_region(self, cell, language):
        meta = nbgrader_meta(cell)
        if cell.cell_type == "markdown" and meta.get("grade") and meta.get("solution"):
            points = float(meta.get("points") or 0)
            stub, self.text_stub = self.text_stub, (self.written_stub.format(points=points) if points
                                                    else self.ungraded_written_stub)
            try:
                return super()._replace_solution_region(cell, language)
            finally:
                self.text_stub = stub
        if cell.cell_type == "code" and language == "python":
            lines = cell.source.split("\n")
            begins = [n for n, line in enumerate(lines) if self.begin_solution_delimeter in line]
            ends = [n for n, line in enumerate(lines) if self.end_solution_delimeter in line]
            if len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0] and not re.match(r"\s", lines[begins[0]]):
                names = assigned_names("\n".join(lines[begins[0] + 1:ends[0]]))
                if names:
                    stub = [self.answer_stub.format(name=name) for name in names]
                    cell.source = "\n".join(lines[:begins[0]] + stub + lines[ends[0] + 1:])
                    return True
        return super()._replace_solution_region(cell, language)


#: A check's weight, said at the end of its line (:mod:`hardened_grading.judge.checks`): ``# weight 0``.
WEIGHT_COMMENT = re.compile(r"[ \t]*#\s*weight\s*[:=]?\s*\d+(?:\.\d+)?[ \t]*$", re.M)


def without_weights(source):
    """`source` without the weight comments at the end of its lines (``check_number(x)  # weight 0`` ->
    ``check_number(x)``): what a student's release shows of a test cell."""
    return WEIGHT_COMMENT.sub("", source)


class HideWeights(Preprocessor):
    """Take the checks' weight comments out of the release's test cells, after nbgrader saved the cells to the
    gradebook (``SaveCells``), so that grading weighs the checks as the source says: a student reads
    ``# weight 0`` beside a visible check as "this is worth nothing" (a concept question's form check, whose
    question's point is the hidden check of its value)."""

    enabled = Bool(True)

    def preprocess_cell(self, cell, resources, index):
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            cell.source = without_weights(cell.source)
        return cell, resources


def generate_assignment_preprocessors():
    """nbgrader's GenerateAssignment preprocessors, with :class:`AnswerStubs` in place of ClearSolutions and
    :class:`HideWeights` after ClearHiddenTests (before the release's checksums are computed)."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.preprocessors import ClearHiddenTests

    default = GenerateAssignment.class_traits()["preprocessors"].default()
    made = [AnswerStubs if preprocessor is ClearSolutions else preprocessor for preprocessor in default]
    return made[:made.index(ClearHiddenTests) + 1] + [HideWeights] + made[made.index(ClearHiddenTests) + 1:]
