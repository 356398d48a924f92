"""Make submissions from the released notebook: the reference answers, blanks, and grafted mistakes.

A submission starts from ``release/posenc/exercises.ipynb``, as a student would. Its
answer cells can be filled with the reference answers of the source notebook, and any
function in them replaced by other code, to model a student's mistake or a different
correct answer.
"""

import ast
import re
from pathlib import Path

import nbformat

from .layout import ASSIGNMENT, NOTEBOOK, RELEASE_NOTEBOOK, SOURCE_NOTEBOOK, grade_id, is_answer_cell, is_test_cell  # noqa: F401

MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$\n?", re.M)


def reference_answers(source_notebook=SOURCE_NOTEBOOK):
    """The code of each answer cell of the source notebook, solution markers removed, by grade_id."""
    notebook = nbformat.read(str(source_notebook), as_version=4)
    return {grade_id(cell): MARKER.sub("", cell.source) for cell in notebook.cells if is_answer_cell(cell)}


def replace_function(code, name, new_code):
    """Replace the top-level ``def name`` in `code` by `new_code`."""
    lines = code.split("\n")
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            return "\n".join(lines[:start] + new_code.strip("\n").split("\n") + lines[node.end_lineno:])
    raise KeyError(f"no function {name!r} in this cell")


def find_function_cell(notebook, name):
    """The answer cell that defines function `name`."""
    pattern = re.compile(rf"^def {re.escape(name)}\(", re.M)
    for cell in notebook.cells:
        if is_answer_cell(cell) and pattern.search(cell.source):
            return cell
    raise KeyError(f"no answer cell defines {name!r}")


#: What :func:`make_submission` writes in each written reflection of a submission that answers: a student's own
#: words, which a person grades (formgrader), never a test.
REFLECTION = "It still runs, but past the lengths it was trained on the model meets angles it never learned."


def is_written_answer(cell):
    """A written reflection: a markdown cell graded by hand (nbgrader's manually graded answer)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "markdown" and bool(meta.get("solution")) and bool(meta.get("grade"))


def make_submission(answers=None, functions=None, release_notebook=RELEASE_NOTEBOOK, reflections=REFLECTION):
    """A copy of the released notebook with answers filled in.

    Parameters
    ----------
    answers : dict, optional
        Code for answer cells, by grade_id (for example `reference_answers()`); cells not
        named keep the release's stub.
    functions : dict, optional
        ``{function_name: code}``: each function is replaced, in the answer cell that
        defines it, by `code`, which may hold helpers too.
    reflections : str or None
        What a submission with `answers` or `functions` writes in each written reflection, as a student who works
        the whole notebook does (graded by hand: no test reads it); None keeps the release's stubs there.
    """
    notebook = nbformat.read(str(release_notebook), as_version=4)
    for cell in notebook.cells:
        if is_answer_cell(cell) and answers and grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
        if is_written_answer(cell) and (answers or functions) and reflections is not None:
            cell.source = reflections
    for name, code in (functions or {}).items():
        cell = find_function_cell(notebook, name)
        cell.source = replace_function(cell.source, name, code)
    return notebook


def write_submission(notebook, submitted_dir, student, assignment=ASSIGNMENT, filename=NOTEBOOK):
    """Write `notebook` where ``nbgrader autograde`` looks for it; return the path."""
    path = Path(submitted_dir) / student / assignment / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, str(path))
    return path
