"""The graded notebook is the student's own notebook, with the release's locked cells restored.

Stock nbgrader runs a submission once, from top to bottom, with the student's cells where they put
them. So does the engine: whatever a student does outside the test cells (a scratch cell, a draft, an
edited import cell, helpers in a cell of their own, markdown notes) gets the verdict that ``nbgrader
validate`` and a plain top-to-bottom run give it. Only the locked cells (the tests, the checking
helpers) are the release's, whatever the student did to them:

- a locked cell the student edited is the release's again, with its hidden tests (the gradebook's
  source, so that nbgrader's ``OverwriteCells`` finds nothing to restore); the log names it, as stock
  nbgrader's warning of a changed checksum does;
- a deleted one is put back in its place: after the cell it follows in the release (and after the
  student's own cells there), as nbgrader's ``add_missing_cells`` does;
- a duplicated one counts once (its first copy); one moved out of the release's order goes back in its
  place, so that no test runs before the answer it tests;
- an answer cell is matched by ``grade_id``: the student's source under the release's metadata. Of a
  duplicated answer cell, the last copy is the answer and earlier copies stay as the student's cells.
  A deleted one is not put back: the student's own cells may define what it did, as in Validate.

Every other cell is kept once, where it is, with its nbgrader metadata removed: it is run, never graded.
"""

import bisect
import copy

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor

from .cells import course_root, grade_id, nbgrader_meta


def course_notebook(folder, assignment, notebook_id):
    """``COURSE/FOLDER/ASSIGNMENT/NOTEBOOK_ID.ipynb``, where nbgrader is grading."""
    return course_root() / folder / str(assignment) / f"{notebook_id}.ipynb"


def release_notebook(assignment, notebook_id):
    """The released notebook nbgrader is grading a submission of."""
    return nbformat.read(str(course_notebook("release", assignment, notebook_id)), as_version=4)


def plain(cell):
    """A copy of a student's own cell, with no nbgrader metadata: it is run, never graded."""
    cell = copy.deepcopy(cell)
    cell.metadata.pop("nbgrader", None)
    return cell


def locked_sources(db_url, assignment, notebook_id):
    """``{grade_id: source}`` of the notebook's locked cells in the gradebook (hidden tests included);
    empty when the gradebook does not have them."""
    if not db_url:
        return {}
    from nbgrader.api import Gradebook, MissingEntry

    try:
        with Gradebook(db_url) as gradebook:
            notebook = gradebook.find_notebook(notebook_id, assignment)
            return {cell.name: cell.source for cell in notebook.source_cells if cell.locked}
    except MissingEntry:
        return {}


def longest_increasing(values):
    """Indices of a longest strictly increasing subsequence of `values` (patience sorting)."""
    tails, tail_at, previous = [], [], [None] * len(values)
    for index, value in enumerate(values):
        slot = bisect.bisect_left(tails, value)
        previous[index] = tail_at[slot - 1] if slot else None
        if slot == len(tails):
            tails.append(value), tail_at.append(index)
        else:
            tails[slot], tail_at[slot] = value, index
    chain, index = [], tail_at[-1] if tail_at else None
    while index is not None:
        chain.append(index)
        index = previous[index]
    return set(chain)


def restore(submission, release, locked=None):
    """The graded notebook's cells: `submission`'s, with `release`'s locked cells restored.

    Parameters
    ----------
    submission, release : nbformat.NotebookNode
        The student's notebook and the released one.
    locked : dict, optional
        ``{grade_id: source}`` of the locked cells as the gradebook has them (with hidden tests);
        the release's source is used for the others.

    Returns
    -------
    cells : list of nbformat.NotebookNode
    problems : list of str
        What the student did to the release's cells, for the log; empty when nothing.

    Examples
    --------
    >>> from nbformat.v4 import new_code_cell, new_notebook
    >>> def graded(kind, name, source):
    ...     return new_code_cell(source, metadata={"nbgrader": {"grade_id": name, kind: True}})
    >>> release = new_notebook(cells=[graded("solution", "a", "stub"), graded("grade", "t", "test")])
    >>> mine = new_notebook(cells=[new_code_cell("draft"), graded("solution", "a", "mine")])
    >>> cells, problems = restore(mine, release)
    >>> [c.source for c in cells], problems
    (['draft', 'mine', 'test'], ['1 test cell(s) deleted'])
    """
    locked = locked or {}
    ids = [grade_id(cell) for cell in release.cells if grade_id(cell)]
    order = {name: index for index, name in enumerate(ids)}
    by_id = {grade_id(cell): cell for cell in release.cells if grade_id(cell)}
    answers = {name for name, cell in by_id.items() if nbgrader_meta(cell).get("solution")}
    release_sources = {cell.source for cell in release.cells}
    problems, duplicated, edited = [], [], []

    def kind(names):
        """How the log names these release cells: "test" cells when they all are, else "locked"."""
        return "test" if all(nbgrader_meta(by_id[name]).get("grade") for name in names) else "locked"

    def restored(name, source=None):
        cell = copy.deepcopy(by_id[name])
        cell.source = source if source is not None else locked.get(name, cell.source)
        return cell

    last_copy = {grade_id(cell): index for index, cell in enumerate(submission.cells) if grade_id(cell) in answers}
    cells, names, own, seen = [], [], [], set()  # names[i]: the release id of cells[i], or None
    for index, cell in enumerate(submission.cells):
        name = grade_id(cell)
        if name in answers and last_copy[name] == index:
            cells.append(restored(name, cell.source)), names.append(name), own.append(False)
        elif name in order and name not in answers:
            if name in seen:
                duplicated.append(name)
                continue
            seen.add(name)
            if cell.source != by_id[name].source:  # as stock nbgrader warns of a changed checksum
                edited.append(name)
            cells.append(restored(name)), names.append(name), own.append(False)
        else:
            if name in answers:
                problems.append(f"answer cell {name} appears more than once")
            cells.append(plain(cell)), names.append(None), own.append(cell.source not in release_sources)

    if edited:
        problems.append(f"{len(edited)} {kind(edited)} cell(s) edited: {', '.join(edited)}")
    if duplicated:
        problems.append(f"{kind(duplicated)} cells duplicated: {', '.join(sorted(set(duplicated)))}")
    if answers and not answers & set(names):
        problems.append("none of the assignment's answer cells is in this notebook (a notebook of another assignment?)")

    # Locked cells out of the release's order go back to their place; answer cells stay where they are.
    placed = [i for i, name in enumerate(names) if name]
    in_order = {placed[k] for k in longest_increasing([order[names[i]] for i in placed])}
    moved = [i for i in placed if i not in in_order and names[i] not in answers]
    if moved:
        problems.append(f"{len(moved)} {kind([names[i] for i in moved])} cell(s) out of place")
        for i in reversed(moved):
            del cells[i], names[i], own[i]
    missing = [name for name in ids if name not in answers and name not in names]
    deleted = [name for name in missing if name not in seen]
    if deleted:
        problems.append(f"{len(deleted)} {kind(deleted)} cell(s) deleted")
    for name in missing:
        at = _place(names, own, order, name)
        cells.insert(at, restored(name)), names.insert(at, name), own.insert(at, False)

    for cell in cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return cells, problems


def _place(names, own, order, name):
    """Where release cell `name` goes back: after the nearest cell before it in the release that is
    here, and after the student's own cells that follow that one; else before the nearest cell after
    it; else at the end."""
    rank = order[name]
    before = [i for i, other in enumerate(names) if other and order[other] < rank]
    if before:
        at = max(before, key=lambda i: order[names[i]]) + 1
        while at < len(names) and own[at]:
            at += 1
        return at
    after = [i for i, other in enumerate(names) if other and order[other] > rank]
    return min(after, key=lambda i: order[names[i]]) if after else len(names)


class RestoreReleaseCells(NbGraderPreprocessor):
    """First of ``Autograde.sanitize_preprocessors``: grade the student's notebook as it is, with the
    release's locked cells restored (:func:`restore`); the notebook's metadata is the release's."""

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        student, assignment, notebook_id = info.get("student"), info.get("assignment"), info.get("notebook")
        try:
            release = release_notebook(assignment, notebook_id)
        except FileNotFoundError:
            self.log.warning("hardened_grading: no release/%s/%s.ipynb to restore the tests from; grading as submitted",
                             assignment, notebook_id)
            return nb, resources
        nb.cells, problems = restore(nb, release, locked_sources(info.get("db_url"), assignment, notebook_id))
        if problems:
            self.log.warning("hardened_grading: student %r: %s; graded with the original tests", student, "; ".join(problems))
        nb.metadata = copy.deepcopy(release.metadata)
        return nb, resources

