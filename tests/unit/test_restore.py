"""Unit tests of :func:`hardened_grading.preprocessors.restore.restore` on in-memory notebooks (milliseconds).

The release here is small and shaped like the course's: prose, a set-up cell, the locked checking
helpers, then exercises of an answer cell and a locked test cell each. ``tests/grading/test_habits.py`` and
``tests/grading/test_grading.py`` prove the same in real ``nbgrader autograde`` runs.
"""

import copy

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from hardened_grading.preprocessors.restore import longest_increasing, restore

from ..helpers.cells import answer_cell, grade_cell, locked_cell


def answer(name, source="stub"):
    return answer_cell(source, name)


def locked_test(name, source=None):
    return grade_cell(source or f"check({name!r})", name, 1, locked=True)


def release():
    notebook = new_notebook(cells=[
        new_markdown_cell("# Title"), new_code_cell("import numpy as np"),
        locked_cell("def check(x): ...", "helpers"),
        new_markdown_cell("## Exercise 1"), answer("a1"), locked_test("t1"),
        new_markdown_cell("## Exercise 2"), answer("a2"), locked_test("t2"),
        new_markdown_cell("## Exercise 3"), answer("a3"), locked_test("t3"),
    ])
    for number, cell in enumerate(notebook.cells):  # the same ids in every copy, as a release's
        cell.id = f"cell-{number}"
    return notebook


def student(edit=None):
    notebook = nbformat.from_dict(release())
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = "answer of " + cell.metadata.nbgrader.grade_id
    if edit:
        edit(notebook)
    return notebook


def sources(cells):
    return [cell.source for cell in cells]


def index(notebook, name):
    return next(i for i, c in enumerate(notebook.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == name)


def test_an_untouched_submission_is_graded_as_it_is():
    mine = student()
    cells, problems, _ = restore(mine, release())
    assert sources(cells) == sources(mine.cells) and problems == []


@pytest.mark.parametrize("at", [0, 1, 4, 6, 12])
def test_a_cell_of_the_students_own_stays_once_where_it_was(at):
    mine = student()
    mine.cells.insert(at, new_code_cell("scratch = 1"))
    cells, problems, _ = restore(mine, release())
    assert sources(cells) == sources(mine.cells) and problems == []


def test_prose_and_set_up_cells_are_the_students_as_edited():
    def edit(nb):
        nb.cells[1].source = "import matplotlib.pyplot as plt\nimport numpy as np"
        del nb.cells[3]  # the heading of exercise 1
    mine = student(edit)
    cells, _, _ = restore(mine, release())
    assert sources(cells) == sources(mine.cells)


def test_an_edited_test_cell_is_the_gradebooks_with_its_hidden_tests():
    mine = student(lambda nb: setattr(nb.cells[index(nb, "t2")], "source", "pass"))
    cells, problems, _ = restore(mine, release(), locked={"t2": "check('t2')\n# hidden"})
    assert cells[index(mine, "t2")].source == "check('t2')\n# hidden"
    assert problems == ["1 test cell(s) edited: t2"], "the log names it, as stock nbgrader's changed checksum"


def test_deleted_test_cells_go_back_after_their_answer_and_the_students_cells_there():
    def edit(nb):
        nb.cells.insert(index(nb, "a1") + 1, new_code_cell("helper = 1"))
        nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in ("t1", "t3")]
    cells, problems, _ = restore(student(edit), release())
    names = [c.metadata.get("nbgrader", {}).get("grade_id") or c.source for c in cells]
    assert names[names.index("a1"):names.index("a1") + 3] == ["a1", "helper = 1", "t1"]
    assert names[-2:] == ["a3", "t3"]
    assert problems == ["2 test cell(s) deleted"]


def test_a_deleted_first_locked_cell_goes_back_before_the_next_one():
    cells, _, _ = restore(student(lambda nb: nb.cells.pop(2)), release())
    names = [c.metadata.get("nbgrader", {}).get("grade_id") for c in cells]
    assert names.index("helpers") < names.index("a1")


def test_test_cells_moved_or_duplicated_count_once_in_their_place():
    def edit(nb):
        tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") and "t" in c.metadata.nbgrader.grade_id]
        nb.cells = [c for c in nb.cells if c not in tests] + tests[::-1] + tests[:2]
    cells, problems, _ = restore(student(edit), release())
    names = [c.metadata.get("nbgrader", {}).get("grade_id") for c in cells]
    for number in (1, 2, 3):
        assert names.count(f"t{number}") == 1 and names.index(f"t{number}") == names.index(f"a{number}") + 1
    assert "test cells duplicated: t1, t2" in problems and any("out of place" in p for p in problems)


def names_or_sources(cells):
    """Each cell's grade id, or its source for a cell without one."""
    return [c.metadata.get("nbgrader", {}).get("grade_id") or c.source for c in cells]


def copy_of(name, source=None, cell_id=None, at=lambda nb, name: index(nb, f"t{name[1:]}") + 1):
    """An edit: a copy of answer cell `name` (its metadata kept), with `source` and `cell_id` (None: none;
    "same": the original's; "new": a fresh one, as JupyterLab's paste), inserted at ``at(nb, name)``:
    by default right below its test."""
    def edit(nb):
        copied = nbformat.from_dict(copy.deepcopy(nb.cells[index(nb, name)]))
        copied.source = source if source is not None else copied.source
        if cell_id == "new":
            copied.id = nbformat.v4.new_code_cell().id
        elif cell_id is None:
            copied.pop("id", None)
        nb.cells.insert(at(nb, name), copied)
    return edit


def without_ids(nb):
    """Saved by VS Code: nbformat 4.4, no cell ids."""
    nb.nbformat_minor = 4
    for cell in nb.cells:
        cell.pop("id", None)


def graded_answer(cells, name):
    [cell] = [c for c in cells if c.metadata.get("nbgrader", {}).get("grade_id") == name]
    return cell


@pytest.mark.parametrize("cell_id", ["new", "same"])
@pytest.mark.parametrize("source", ["experiment with a2", None], ids=["edited", "unedited"])
def test_a_copy_of_an_answer_below_its_test_stays_there_and_the_original_is_the_answer(source, cell_id):
    """A copy below the test, edited into an experiment or not, its cell id a new one (JupyterLab's paste) or
    the original's: graded as the student ran it, nothing moved."""
    mine = student(copy_of("a2", source, cell_id))
    cells, problems, copies = restore(mine, release())
    assert sources(cells) == sources(mine.cells), "nothing moved"
    at = index(mine, "a2")
    assert graded_answer(cells, "a2") is cells[at] and cells[at].source == "answer of a2"
    assert "nbgrader" not in cells[at + 2].metadata, "the copy is run, never graded"
    assert problems == []
    [line] = copies
    assert line.startswith(f"answer cell a2 appears more than once (cells {at + 1}, {at + 3} of the notebook): "
                           f"cell {at + 1}, ") and f"the other copy (cell {at + 3}) runs where the student put it" in line


def test_in_a_notebook_without_ids_the_first_copy_above_its_test_is_the_answer():
    def edit(nb):
        without_ids(nb)
        copy_of("a2", "experiment below", cell_id=None)(nb)
        copy_of("a2", "draft above", cell_id=None, at=lambda nb, name: index(nb, name))(nb)
    mine = student(edit)
    cells, problems, [line] = restore(mine, release())
    assert sources(cells) == sources(mine.cells) and problems == []
    assert graded_answer(cells, "a2").source == "draft above"
    assert "the first copy above its test" in line


def test_of_copies_above_its_test_the_one_with_the_releases_id_is_the_answer():
    """A copy pasted above the original (a new id): the original is still the answer."""
    mine = student(copy_of("a2", "draft above", cell_id="new", at=lambda nb, name: index(nb, name)))
    cells, problems, [line] = restore(mine, release())
    assert sources(cells) == sources(mine.cells) and problems == []
    assert graded_answer(cells, "a2").source == "answer of a2"
    assert "the copy with the release's cell id above its test" in line


def test_of_an_answer_with_no_test_after_it_the_original_is_the_answer():
    """The release's last cell an answer (graded by hand, say): every copy counts as above its test."""
    def ends_in_an_answer():
        notebook = release()
        notebook.cells.append(answer("a4"))
        notebook.cells[-1].id = "cell-last"
        return notebook
    mine = nbformat.from_dict(copy.deepcopy(ends_in_an_answer()))
    copy_of("a4", "a copy", cell_id="new", at=lambda nb, name: 0)(mine)
    cells, problems, [line] = restore(mine, ends_in_an_answer())
    assert sources(cells) == sources(mine.cells) and problems == []
    assert graded_answer(cells, "a4") is cells[-1]
    assert "cell 14, the copy with the release's cell id, is graded as the answer; the other copy (cell 1)" in line


def test_an_answer_copied_and_moved_below_its_test_is_graded_as_a_moved_answer():
    """No copy above the test (the student moved the answer below it): the copy with the release's id is the
    answer, and the test goes back under it, after the student's cells there, as for a single answer moved
    there (a test never runs before its answer)."""
    def edit(nb):
        copy_of("a2", "experiment", cell_id="new")(nb)
        copy_of("a2", cell_id="same")(nb)
        del nb.cells[index(nb, "a2")]  # the original, above the test; its copy with the same id stays below
    mine = student(edit)
    cells, problems, [line] = restore(mine, release())
    names = names_or_sources(cells)
    assert names[names.index("a2"):names.index("a2") + 3] == ["a2", "experiment", "t2"]
    assert "the copy with the release's cell id, none being above its test" in line
    assert problems == ["1 test cell(s) out of place"]


def test_every_graded_cell_has_an_id_of_its_own_and_the_releases_cells_keep_theirs():
    """A notebook saved as nbformat 4.4 (no ids), with a cell of the student's that took a release id: the
    graded notebook is a valid 4.5 one."""
    def edit(nb):
        without_ids(nb)
        nb.cells.insert(3, new_code_cell("scratch = 1", id="cell-2"))  # the id of release cell "helpers"
        nb.cells.insert(4, new_code_cell("bad = 1"))
        nb.cells[4]["id"] = "not a valid id!"
    cells, _, _ = restore(student(edit), release())
    ids = [c.id for c in cells]
    assert len(set(ids)) == len(ids)
    released = {c.metadata.get("nbgrader", {}).get("grade_id"): c.id for c in release().cells}
    assert all(c.id == released[name] for c, name in zip(cells, names_or_sources(cells)) if name in released)
    nbformat.validate(new_notebook(cells=cells))  # nbformat 4.5


def test_a_deleted_answer_cell_is_not_put_back_as_a_stub():
    """The student may define the function in a cell of their own: Validate runs that, so grading does too."""
    def edit(nb):
        at = index(nb, "a1")
        nb.cells[at] = new_code_cell("answer of a1, in my own cell")
    cells, _, _ = restore(student(edit), release())
    assert "stub" not in sources(cells) and "answer of a1, in my own cell" in sources(cells)


def test_metadata_of_the_students_own_cells_cannot_make_them_graded():
    forged = new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": "mine", "grade": True, "points": 100}})
    cells, _, _ = restore(student(lambda nb: nb.cells.insert(4, forged)), release())
    assert all(c.metadata.get("nbgrader", {}).get("grade_id") != "mine" for c in cells)


def test_outputs_are_cleared():
    def edit(nb):
        nb.cells[index(nb, "a1")].outputs = [nbformat.v4.new_output("stream", text="saved")]
        nb.cells[index(nb, "a1")].execution_count = 7
    cells, _, _ = restore(student(edit), release())
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in cells if c.cell_type == "code")


def test_a_notebook_of_another_assignment_is_said_and_gets_every_locked_cell():
    cells, problems, _ = restore(new_notebook(cells=[new_code_cell("answer = 42")]), release())
    names = [c.metadata.get("nbgrader", {}).get("grade_id") for c in cells]
    assert names == [None, "helpers", "t1", "t2", "t3"]
    assert any("another assignment" in p for p in problems)


@pytest.mark.parametrize("values, length", [([], 0), ([3, 1, 2], 2), ([1, 2, 3], 3), ([5, 4, 3], 1),
                                            ([0, 8, 4, 12, 2, 10, 6, 14, 1, 9], 4)])
def test_longest_increasing(values, length):
    chosen = sorted(longest_increasing(values))
    assert len(chosen) == length
    assert all(values[a] < values[b] for a, b in zip(chosen, chosen[1:]))


def test_a_notebook_with_no_answer_cells_is_not_said_to_be_of_another_assignment():
    """A released notebook with tests and no answer cells (nbgrader's ``open_relative_file.ipynb``) is
    graded with nothing said of it."""
    tests_only = new_notebook(cells=[c for c in release().cells if not c.metadata.get("nbgrader", {}).get("solution")])
    cells, problems, _ = restore(copy.deepcopy(tests_only), tests_only)
    assert sources(cells) == sources(tests_only.cells) and problems == []
