"""posenc-check on a notebook whose answer cell has a syntax error: it says which cell, where, and what to do, under
the exercise (its checks say the name is not defined). In memory: the table, not nbgrader's run."""

import nbformat

from posenc_course.student.check import format_result, syntax_errors

from ..helpers.cells import answer_cell, grade_cell

UNCLOSED = "def relative_position_matrix(L):\n    x = (\n"


def notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def test_an_answer_cell_that_does_not_compile_is_said_under_its_exercise():
    learner = notebook(answer_cell("import numpy as np", "ex01_setup_answer"),
                       answer_cell(UNCLOSED, "ex03_relative_position_matrix"),
                       grade_cell(UNCLOSED, "ex03_relative_position_matrix_test", 1),  # a test cell: not the learner's
                       answer_cell("%matplotlib inline\nex03_negative_offsets = 3\n", "ex03_negative_offsets_answer"))
    said = ("the answer cell ex03_relative_position_matrix has a syntax error (line 2: '(' was never closed): fix it, "
            "run it again, and save the notebook")
    assert syntax_errors(learner) == {"ex03": [said]}
    checks = {"ex03": [{"test": "ex03_relative_position_matrix_test", "line": 1, "hidden": False, "passed": False,
                        "message": "not run (NameError: name 'relative_position_matrix' is not defined)"}]}
    table = format_result({"ex03": (0.0, 4.0)}, checks, broken=syntax_errors(learner)).splitlines()
    assert table[2:4] == ["ex03         0/4     1 failed check", f"    {said}"], table


def test_a_syntax_error_in_a_cell_that_still_holds_the_stub_is_said_too():
    """A stub with "x = (" typed under it is "not attempted" (the stub's words are there), yet its exercise's
    checks fail for the syntax error: the line says so."""
    stub = ("def relative_position_matrix(L):\n    raise NotImplementedError(\"not answered yet: write this function\")"
            "\n    x = (\n")
    learner = notebook(answer_cell(stub, "ex03_relative_position_matrix"))
    table = format_result({"ex03": (0.0, 4.0)}, {}, states={"ex03": "not attempted"},
                          broken=syntax_errors(learner)).splitlines()
    assert table[2] == "ex03         0/4     not attempted", table
    assert table[3].startswith("    the answer cell ex03_relative_position_matrix has a syntax error (line 3: "), table
