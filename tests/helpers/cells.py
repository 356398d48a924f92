"""Notebook cells with nbgrader's metadata, built in one place (as nbgrader's own tests build theirs in
``nbgrader/tests/__init__.py``: ``create_grade_cell``, ``create_solution_cell``...).

A cell of nbgrader's carries its whole schema (version 3): ``grade``, ``solution``, ``locked`` and
``schema_version``, with what the builder says on top; a cell without any gets no nbgrader metadata at all.

>>> answer_cell("x = 1", "ex01").metadata["nbgrader"] == {
...     "grade": False, "solution": True, "locked": False, "schema_version": 3, "grade_id": "ex01"}
True
>>> grade_cell("assert x == 1", "ex01_test", 2).metadata["nbgrader"]["points"]
2
>>> nbgrader_cell("code", "print(1)").metadata
{}
"""

import nbformat

#: nbgrader's metadata of a cell that is none of its kinds, in its schema version 3.
SCHEMA = {"grade": False, "solution": False, "locked": False, "schema_version": 3}


def nbgrader_cell(kind, source="", **nbgrader):
    """A ``code`` or ``markdown`` cell of `source` with nbgrader's metadata `nbgrader` over SCHEMA (none when
    `nbgrader` is empty)."""
    metadata = {"nbgrader": {**SCHEMA, **nbgrader}} if nbgrader else {}
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    return make(source, metadata=metadata)


def code_cell(source="", grade_id=None, **nbgrader):
    """A code cell: plain when neither `grade_id` nor `nbgrader` is given, else nbgrader's with these."""
    return nbgrader_cell("code", source, **({"grade_id": grade_id} if grade_id else {}), **nbgrader)


def answer_cell(source, grade_id, **nbgrader):
    """An answer cell (nbgrader's "Autograded answer", a solution cell) named `grade_id`."""
    return nbgrader_cell("code", source, grade_id=grade_id, solution=True, **nbgrader)


def grade_cell(source, grade_id, points, **nbgrader):
    """A test cell (nbgrader's "Autograder tests", a grade cell) named `grade_id`, worth `points`."""
    return nbgrader_cell("code", source, grade_id=grade_id, grade=True, points=points, **nbgrader)


def locked_cell(source, grade_id, **nbgrader):
    """A read-only cell (nbgrader's "Read-only"), named `grade_id`."""
    return nbgrader_cell("code", source, grade_id=grade_id, locked=True, **nbgrader)
