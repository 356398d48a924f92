"""What a cell of an nbgrader notebook is, read from nbgrader's own metadata; and where the course is.

The engine knows a course only through these: nbgrader's cell metadata (``grade``, ``solution``,
``grade_id``, ``points``) and the course directory that holds ``nbgrader_config.py``.
"""

from pathlib import Path

CONFIG_FILE = "nbgrader_config.py"

#: The key of the engine's own metadata, in a graded cell (``checks``, ``score``, ``points``) and in a
#: graded notebook's first cell (``unreadable``).
META = "hardened_grading"
UNREADABLE = "unreadable"  #: ``META.unreadable`` of a graded notebook's first cell: why the file could not be read


def course_root(start=None):
    """The course directory that holds `start`: the nearest folder at or above it with an
    ``nbgrader_config.py``, or `start` itself when there is none.

    `start` defaults to the working folder, which is the course directory wherever the engine runs:
    nbgrader works in ``CourseDirectory.root`` while it converts notebooks (its hooks and
    preprocessors run there), and the grading kernel starts in the folder nbgrader gives it.
    """
    start = Path(start or Path.cwd()).resolve()
    return next((folder for folder in [start, *start.parents] if (folder / CONFIG_FILE).exists()), start)


def nbgrader_meta(cell):
    """A cell's ``nbgrader`` metadata (empty for a cell without it)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def engine_meta(cell):
    """A cell's metadata of this engine (:data:`META`; empty for a cell it did not grade)."""
    return cell.get("metadata", {}).get(META, {})


def grade_id(cell):
    return nbgrader_meta(cell).get("grade_id")


def is_answer_cell(cell):
    """A code cell the student writes (an nbgrader solution cell)."""
    return cell.cell_type == "code" and nbgrader_meta(cell).get("solution", False)


def is_test_cell(cell):
    """A graded code cell that is not an answer: the tests of an exercise."""
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("grade", False) and not meta.get("solution", False)


def unreadable_reason(notebook):
    """Why the submission graded as `notebook` could not be read (the ``unreadable`` metadata of its first
    cell, which :class:`hardened_grading.exporters.notebook.TolerantNotebookExporter` puts there), or None for a
    submission that was read."""
    first = notebook.cells[0] if notebook.cells else {}
    return engine_meta(first).get(UNREADABLE)
