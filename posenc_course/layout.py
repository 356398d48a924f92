"""The course's layout and its notebooks' nbgrader metadata, in one place.

Names (the assignment, the notebook), where things are, and what a cell is. Points and counts are
never typed: :func:`points_per_test_cell` and :func:`points_per_exercise` read them from a notebook's metadata.
"""

from pathlib import Path

#: The repository root, which is also the nbgrader course directory.
ROOT = Path(__file__).resolve().parents[1]

ASSIGNMENT = "posenc"  #: the graded assignment, the course's core
ADVANCED = "posenc-advanced"  #: the second graded assignment, for students who finished the first
GRADED = (ASSIGNMENT, ADVANCED)  #: every graded assignment, in the order students take them
NOTEBOOK_ID = "exercises"  #: the one notebook of each graded assignment, as nbgrader names it
NOTEBOOK = f"{NOTEBOOK_ID}.ipynb"
CONFIG_FILE = "nbgrader_config.py"


def source_notebook(assignment=ASSIGNMENT, root=ROOT):
    """The instructor's notebook of a graded `assignment`, with solutions and hidden tests."""
    return Path(root) / "source" / assignment / NOTEBOOK


def release_notebook(assignment=ASSIGNMENT, root=ROOT):
    """The students' notebook of a graded `assignment`, as nbgrader generates it."""
    return Path(root) / "release" / assignment / NOTEBOOK


SOURCE_NOTEBOOK = source_notebook()  #: the first assignment's, which most of the tooling grades
RELEASE_NOTEBOOK = release_notebook()


def course_root(start=None):
    """The course directory that holds `start`: the nearest folder at or above it with an
    ``nbgrader_config.py``, or `start` itself when there is none.

    `start` defaults to the working folder, which is the course directory wherever the course's code
    runs: nbgrader works in ``CourseDirectory.root`` while it converts notebooks (its hooks and
    preprocessors run there), and the grading kernel starts in the folder nbgrader gives it.
    """
    start = Path(start or Path.cwd()).resolve()
    return next((folder for folder in [start, *start.parents] if (folder / CONFIG_FILE).exists()), start)


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell):
    return nbgrader_meta(cell).get("grade_id")


def is_answer_cell(cell):
    return cell.cell_type == "code" and nbgrader_meta(cell).get("solution", False)


def is_test_cell(cell):
    """A graded code cell that is not an answer: the tests of an exercise."""
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("grade", False) and not meta.get("solution", False)


UNREADABLE = "unreadable"  #: ``posenc.unreadable`` of a graded notebook's first cell: why the file could not be read


def unreadable_reason(notebook):
    """Why the submission graded as `notebook` could not be read (the ``posenc.unreadable`` metadata of
    its first cell, which :class:`posenc_course.grading.TolerantNotebookExporter` puts there), or None
    for a submission that was read."""
    first = notebook.cells[0] if notebook.cells else {}
    return first.get("metadata", {}).get("posenc", {}).get(UNREADABLE)


def exercise_of(cell_name):
    """``ex05_apply_rope_test`` -> ``ex05``."""
    return cell_name.split("_", 1)[0]


def points_per_test_cell(notebook):
    """``{grade_id: points}`` of the notebook's test cells, in order."""
    return {grade_id(cell): nbgrader_meta(cell)["points"] for cell in notebook.cells if is_test_cell(cell)}


def points_per_exercise(notebook):
    """``{exercise: points}``: the maximum of each exercise, from its test cells' points."""
    totals = {}
    for name, points in points_per_test_cell(notebook).items():
        totals[exercise_of(name)] = totals.get(exercise_of(name), 0) + points
    return totals
