"""The course's layout and its notebooks' nbgrader metadata, in one place.

Names (the assignment, the notebook), where things are, and what a cell is. Points and counts are
never typed: :func:`points_per_test_cell` and :func:`points_per_exercise` read them from a notebook's metadata.
"""

import re
from pathlib import Path

# What a cell is, and where the course is, are nbgrader's facts: the engine's (hardened_grading.cells).
from hardened_grading.cells import (CONFIG_FILE, UNREADABLE, course_root, grade_id, is_answer_cell,  # noqa: F401
                                    is_test_cell, nbgrader_meta, unreadable_reason)

#: The repository root, which is also the nbgrader course directory.
ROOT = Path(__file__).resolve().parents[1]

ASSIGNMENT = "posenc"  #: the graded assignment, the course's core
ADVANCED = "posenc-advanced"  #: the second graded assignment, for students who finished the first
CURRENT = "posenc-current"  #: the third: the position schemes that 2025-2026 models ship
GRADED = (ASSIGNMENT, ADVANCED, CURRENT)  #: every graded assignment, in the order students take them
NOTEBOOK_ID = "exercises"  #: the one notebook of each graded assignment, as nbgrader names it
NOTEBOOK = f"{NOTEBOOK_ID}.ipynb"


def exercise_functions(assignment):
    """``{"ex01": (function names), ...}`` of a graded `assignment`, as ``posenc_solutions`` lists them."""
    import posenc_solutions

    return {ASSIGNMENT: posenc_solutions.EXERCISES, ADVANCED: posenc_solutions.ADVANCED_EXERCISES,
            CURRENT: posenc_solutions.CURRENT_EXERCISES}[assignment]


def source_notebook(assignment=ASSIGNMENT, root=ROOT):
    """The instructor's notebook of a graded `assignment`, with solutions and hidden tests."""
    return Path(root) / "source" / assignment / NOTEBOOK


def release_notebook(assignment=ASSIGNMENT, root=ROOT):
    """The students' notebook of a graded `assignment`, as nbgrader generates it."""
    return Path(root) / "release" / assignment / NOTEBOOK


SOURCE_NOTEBOOK = source_notebook()  #: the first assignment's, which most of the tooling grades
RELEASE_NOTEBOOK = release_notebook()


#: A test cell's exercise is the start of its grade id, up to the first underscore (the feedback's parts:
#: ``c.FeedbackSummary.part_pattern`` in nbgrader_config.py).
EXERCISE_PATTERN = r"^([^_]+)_"


def exercise_of(cell_name):
    """``ex05_apply_rope_test`` -> ``ex05``."""
    found = re.match(EXERCISE_PATTERN, cell_name)
    return found.group(1) if found else cell_name


def points_per_test_cell(notebook):
    """``{grade_id: points}`` of the notebook's test cells, in order."""
    return {grade_id(cell): nbgrader_meta(cell)["points"] for cell in notebook.cells if is_test_cell(cell)}


def points_by_hand(notebook):
    """The points of the notebook's answers graded by hand (the written reflections: nbgrader's manually graded
    answers), which no test grades."""
    return sum(nbgrader_meta(cell)["points"] for cell in notebook.cells
               if nbgrader_meta(cell).get("grade") and nbgrader_meta(cell).get("solution"))


def points_per_exercise(notebook):
    """``{exercise: points}``: the maximum of each exercise, from its test cells' points."""
    totals = {}
    for name, points in points_per_test_cell(notebook).items():
        totals[exercise_of(name)] = totals.get(exercise_of(name), 0) + points
    return totals
