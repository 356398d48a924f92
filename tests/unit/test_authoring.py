"""The authoring check: every kind of mistake in a spec gives a message at its file and line.

Each row takes the real ``authoring/exercises.md``, makes one mistake in it (``old`` -> ``new``), and
runs the check that ``make notebook`` runs (:func:`posenc_course.notebook.check`: the builder's
checks, then every test cell through the judge against the reference answers). The message must
be at ``authoring/exercises.md:LINE``, where LINE is the line of ``at`` in the changed spec.
"""

import re
import time

import nbformat
import pytest

from posenc_course.layout import GRADED, ROOT, release_notebook
from posenc_course.authoring.notebook import AuthoringError, check

SPEC_NAME = "authoring/exercises.md"
SPEC = (ROOT / SPEC_NAME).read_text()
TEST_FENCE = "```python tests ex03_causal_mask_test points=2"

MISTAKES = [
    # label, old, new, the text whose line the message must name, what the message says
    ("fence without its grade id", TEST_FENCE, "```python tests points=2", "```python tests points=2",
     "a tests cell needs its grade id"),
    ("unknown cell kind", TEST_FENCE, "```python test ex03_causal_mask_test points=2", "```python test ex03_causal",
     "the cell kind must come first"),
    ("test cell without points", TEST_FENCE, "```python tests ex03_causal_mask_test", "```python tests ex03_causal_mask_test\n",
     "a test cell needs its points"),
    ("points that are not a number", TEST_FENCE, "```python tests ex03_causal_mask_test points=two",
     "points=two", "points=two is not a number"),
    ("duplicated grade id", TEST_FENCE, "```python tests ex03_relative_position_matrix_test points=2",
     "```python tests ex03_relative_position_matrix_test points=2\nmask",
     "grade id ex03_relative_position_matrix_test is used already, at authoring/exercises.md:"),
    ("grade id of another exercise", TEST_FENCE, "```python tests ex04_causal_mask_test points=2",
     "```python tests ex04_causal_mask_test", "is in Exercise 3: its ids start with ex03_"),
    ("heading points disagree with the test cells", TEST_FENCE, "```python tests ex03_causal_mask_test points=3",
     "## Exercise 3 ", "Exercise 3 says (1 + 2 + 2 = 5 points), but its test cells have 1 + 2 + 3 = 6"),
    ("reference function that does not exist", "from=causal_mask\n", "from=causal_masks\n", "from=causal_masks",
     "posenc_solutions has no causal_masks"),
    ("solution cell without its markers", 'ex02_tokens_with_a_row = 24\n### END SOLUTION', "ex02_tokens_with_a_row = 24",
     "```python solution ex02_tokens_with_a_row_answer", "needs its answer between ### BEGIN SOLUTION"),
    ("hidden tests never ended", "[[False, True, True]], \"causal_mask([3], [5, 3, 1])\")\n### END HIDDEN TESTS",
     "[[False, True, True]], \"causal_mask([3], [5, 3, 1])\")", TEST_FENCE, "one of the two is missing"),
    ("fence never closed", '"causal_mask([3], [5, 3, 1])")\n### END HIDDEN TESTS\n```\n',
     '"causal_mask([3], [5, 3, 1])")\n### END HIDDEN TESTS\n\n', TEST_FENCE, "this ```python fence is never closed"),
    ("a written answer without its points", "```markdown answer ex03_reflection points=2", "```markdown answer ex03_reflection",
     "```markdown answer ex03_reflection\n", "a written answer takes points="),
    ("a written answer whose kind is not answer", "```markdown answer ex03_reflection points=2",
     "```markdown reflection ex03_reflection points=2", "```markdown reflection", "a markdown fence is a written answer"),
    ("a written answer without its model answer's markers",
     "```markdown answer ex03_reflection points=2\n### BEGIN SOLUTION\n", "```markdown answer ex03_reflection points=2\n",
     "```markdown answer ex03_reflection points=2", "holds its model answer between ### BEGIN SOLUTION"),
    ("a written answer of another exercise", "```markdown answer ex03_reflection points=2",
     "```markdown answer ex04_reflection points=2", "```markdown answer ex04_reflection", "its ids start with ex03_"),
    ("a markdown fence never closed", "### END SOLUTION\n```\n\n+++\n\n## Exercise 4",
     "### END SOLUTION\n\n+++\n\n## Exercise 4", "```markdown answer ex03_reflection",
     "this ```markdown fence is never closed"),
    ("an included file that does not exist", "include=check_helpers.py", "include=check_helper.py",
     "include=check_helper.py", "include=check_helper.py: there is no"),
    ("an include whose fence holds code too", "include=check_helpers.py\n```", "include=check_helpers.py\nx = 1\n```",
     "include=check_helpers.py", "leave the fence empty"),
    ("a test the reference fails", "[[False, True, True]], \"causal_mask([3], [5, 3, 1])\")",
     "[[True, True, True]], \"causal_mask([3], [5, 3, 1])\")", "check_equal(causal_mask([3], [5, 3, 1])",
     "test cell ex03_causal_mask_test fails against the reference answers: AssertionError: causal_mask([3], [5, 3, 1])"),
    ("a test that passes what the judge cannot carry", "check_dtype(got, \"b\", \"causal_mask\")",
     "check_dtype(got, \"b\", \"causal_mask\")\ncausal_mask(np.random.default_rng(0), np.arange(3))",
     "causal_mask(np.random.default_rng(0)",
     "test cell ex03_causal_mask_test cannot be run: CannotCarry: causal_mask(...): argument 1 is a Generator"),
]


@pytest.mark.parametrize("label, old, new, at, says", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_an_authoring_mistake_is_reported_at_its_line(label, old, new, at, says):
    assert SPEC.count(old) == 1, f"the row {label!r} no longer matches the spec: update its old text"
    spec = SPEC.replace(old, new)
    line = spec[:spec.index(at)].count("\n") + 1
    with pytest.raises(AuthoringError) as raised:
        check(spec, SPEC_NAME)
    located = [problem for problem in raised.value.problems if problem.startswith(f"{SPEC_NAME}:{line}: ")]
    assert any(says in problem for problem in located), f"expected at line {line}: {says!r}; got:\n{raised.value}"


def test_the_spec_as_committed_passes_the_check_in_well_under_a_second():
    started = time.perf_counter()
    notebook = check(SPEC, SPEC_NAME)
    assert notebook.cells and time.perf_counter() - started < 30  # a bound for a hung check, not a benchmark


def test_make_notebook_stops_with_the_located_mistakes_and_writes_nothing(tmp_path, monkeypatch):
    from posenc_course.authoring import notebook as builder

    spec, target = tmp_path / "exercises.md", tmp_path / "exercises.ipynb"
    spec.write_text(SPEC.replace(TEST_FENCE, "```python tests points=2"))
    monkeypatch.setattr(builder, "NOTEBOOKS", {spec: target})
    monkeypatch.setattr(builder, "ROOT", tmp_path)
    assert builder.main([]) == 1
    assert not target.exists()


# What a student reads ---------------------------------------------------------------------------

#: The widest code line of a released notebook: wider ones scroll sideways in a JupyterLab cell.
WIDEST_LINE = 100
RELEASED = [*(release_notebook(assignment) for assignment in GRADED), ROOT / "release" / "theory" / "theory.ipynb"]


@pytest.mark.parametrize("notebook", RELEASED, ids=lambda path: path.parent.name)
def test_released_code_fits_a_cell_without_scrolling(notebook):
    wide = [(n, line) for n, cell in enumerate(nbformat.read(str(notebook), as_version=4).cells)
            if cell.cell_type == "code" for line in cell.source.split("\n") if len(line) > WIDEST_LINE]
    assert not wide, f"{len(wide)} code lines wider than {WIDEST_LINE} (cell, line): {wide[:3]}"


@pytest.mark.parametrize("notebook", RELEASED[:len(GRADED)], ids=lambda path: path.parent.name)
def test_no_stub_shows_a_doubled_backslash(notebook):
    """Docstrings with LaTeX are raw strings: a stub shows `\\sin`, not `\\\\sin` (`\\\\` alone ends a matrix row)."""
    cells = nbformat.read(str(notebook), as_version=4).cells
    doubled = [cell.source.split("\n")[0] for cell in cells if cell.cell_type == "code"
               and re.search(r"\\\\[A-Za-z]", cell.source) and cell.metadata.get("nbgrader", {}).get("solution")]
    assert not doubled, doubled
