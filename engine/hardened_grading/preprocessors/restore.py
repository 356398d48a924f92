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
- an answer cell is matched by ``grade_id``: the student's source under the release's metadata. A deleted
  one is not put back: the student's own cells may define what it did, as in Validate.

A duplicated answer cell (a student copied it, to try something out, and maybe edited the copy) is graded
as the original, and nothing is moved: of its copies, the answer is

1. the copy above its test cell (the release's next locked cell) whose cell id is the release's;
2. when no copy, or more than one, is so (a v4.4 notebook has no ids; a copy made by editing the file
   keeps the id), the first copy above its test cell: a pasted copy goes below the cell copied, in
   JupyterLab and VS Code alike;
3. when no copy is above its test cell, the copy with the release's id, else the first, as a single
   answer cell that the student moved below its test (which then goes back under it).

Every other copy stays where the student put it, an ordinary cell without nbgrader metadata: it runs in
the top-to-bottom run as in the student's own, and redefines what it defines for the cells below it,
as there. Stock nbgrader 0.9 grades no such notebook (its ``DeduplicateIds`` leaves a copy with empty
nbgrader metadata, which its ``CheckCellMetadata`` refuses as an "old version"), and ``nbgrader validate``
refuses it ("Duplicate grade id"). The log says which copy was taken, in one line per answer cell.

Every other cell is kept once, where it is, with its nbgrader metadata removed: it is run, never graded.

The graded notebook is nbformat 4.5 at least, every cell with its id, whatever version it was saved in
(VS Code and Jupyter before 2021 save 4.4, without ids; 4.0 to 4.3 have none either). The restored cells
are the release's, with its ids, and nbformat 4.4 does not allow an id: nbgrader would log "Notebook JSON
is invalid" and write a notebook that ``nbformat.validate`` rejects. Keeping the student's 4.4 and
dropping the ids would do too (stock nbgrader 0.9 keeps the version: the cells it adds have no ids); but
4.5 is the release's format, the restored cells keep the ids that name them in the release, and any later
step that adds a cell keeps the notebook valid: ``nbformat.v4.new_code_cell`` always gives an id, and
nbformat fills in a missing id of a 4.5 notebook, where it rejects an id in 4.4. The upgrade loses nothing
(nbformat's own ``v4.upgrade`` adds ids the same way); a cell keeps its id unless it has none, an invalid
one, or one that a restored cell has (which keeps it).
"""

import bisect
import copy
import re

import nbformat
from nbformat.v4.nbbase import random_cell_id
from nbgrader.preprocessors import NbGraderPreprocessor

from ..cells import course_root, grade_id, nbgrader_meta


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


CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  #: a cell id as nbformat 4.5's schema allows it


def answer_copies(submission, release):
    """``{grade_id: index}`` of the copy of each answer cell of `release` in `submission` that is its
    answer (the module's rule), and one line about each duplicated answer cell, for the log."""
    names = [grade_id(cell) for cell in release.cells if grade_id(cell)]
    answers = {grade_id(cell): cell for cell in release.cells if grade_id(cell) and nbgrader_meta(cell).get("solution")}
    found, first_at = {}, {}
    for index, cell in enumerate(submission.cells):
        if grade_id(cell):
            first_at.setdefault(grade_id(cell), index)
        if grade_id(cell) in answers:
            found.setdefault(grade_id(cell), []).append(index)
    chosen, notes = {}, []
    for name, indices in found.items():
        test = next((other for other in names[names.index(name) + 1:] if other not in answers), None)
        above = [i for i in indices if i < first_at.get(test, len(submission.cells))]
        release_id = answers[name].get("id")
        with_id = [i for i in above or indices if release_id and submission.cells[i].get("id") == release_id]
        chosen[name] = with_id[0] if len(with_id) == 1 else (above or indices)[0]
        if len(indices) > 1:
            which = "the copy with the release's cell id" if len(with_id) == 1 else "the first copy"
            where = "" if test not in first_at else " above its test" if above else ", none being above its test"
            notes.append(_copies_note(name, indices, chosen[name], which + where))
    return chosen, notes


def _copies_note(name, indices, chosen, which):
    """The log's line about answer cell `name`'s copies at `indices`, of which `chosen` is the answer."""
    others = [str(i + 1) for i in indices if i != chosen]
    one = len(others) == 1
    return (f"answer cell {name} appears more than once (cells {', '.join(str(i + 1) for i in indices)} of the "
            f"notebook): cell {chosen + 1}, {which}, is graded as the answer; the other "
            f"{'copy (cell' if one else 'copies (cells'} {', '.join(others)}) {'runs' if one else 'run'} where the "
            f"student put {'it' if one else 'them'}, as an ordinary cell")


def with_cell_ids(cells, restored):
    """`cells`, each with a cell id of its own (nbformat 4.5): a restored cell (``restored[i]``) keeps the
    release's, any other its own unless it has none, an invalid one or one taken; a new one then."""
    taken = {cell.get("id") for cell, is_restored in zip(cells, restored) if is_restored}
    for cell, is_restored in zip(cells, restored):
        if is_restored and cell.get("id"):
            continue
        if not (isinstance(cell.get("id"), str) and CELL_ID.fullmatch(cell.id) and cell.id not in taken):
            cell.id = next(new for new in iter(random_cell_id, None) if new not in taken)
        taken.add(cell.id)
    return cells


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
        Each with a cell id (nbformat 4.5).
    problems : list of str
        What the student did to the release's locked cells, for the log; empty when nothing.
    copies : list of str
        One line for each answer cell that appears more than once: which copy is graded as the answer.

    Examples
    --------
    >>> from nbformat.v4 import new_code_cell, new_notebook
    >>> def graded(kind, name, source):
    ...     return new_code_cell(source, metadata={"nbgrader": {"grade_id": name, kind: True}})
    >>> release = new_notebook(cells=[graded("solution", "a", "stub"), graded("grade", "t", "test")])
    >>> mine = new_notebook(cells=[new_code_cell("draft"), graded("solution", "a", "mine")])
    >>> cells, problems, copies = restore(mine, release)
    >>> [c.source for c in cells], problems, copies
    (['draft', 'mine', 'test'], ['1 test cell(s) deleted'], [])
    """
    locked = locked or {}
    ids = [grade_id(cell) for cell in release.cells if grade_id(cell)]
    order = {name: index for index, name in enumerate(ids)}
    by_id = {grade_id(cell): cell for cell in release.cells if grade_id(cell)}
    answers = {name for name, cell in by_id.items() if nbgrader_meta(cell).get("solution")}
    # Which assignment a notebook is: its code answers say it, when the release has some (written answers, such as
    # a reflection per exercise, may share their ids from one assignment to the next).
    code_answers = {name for name in answers if by_id[name].cell_type == "code"} or answers
    release_sources = {cell.source for cell in release.cells}
    problems, duplicated, edited = [], [], []

    def kind(names):
        """How the log names these release cells: "test" cells when they all are, else "locked"."""
        return "test" if all(nbgrader_meta(by_id[name]).get("grade") for name in names) else "locked"

    def restored(name, source=None):
        cell = copy.deepcopy(by_id[name])
        cell.source = source if source is not None else locked.get(name, cell.source)
        return cell

    answer_at, copies = answer_copies(submission, release)
    cells, names, own, seen = [], [], [], set()  # names[i]: the release id of cells[i], or None
    for index, cell in enumerate(submission.cells):
        name = grade_id(cell)
        if name in answers and answer_at[name] == index:
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
            cells.append(plain(cell)), names.append(None), own.append(cell.source not in release_sources)

    if edited:
        problems.append(f"{len(edited)} {kind(edited)} cell(s) edited: {', '.join(edited)}")
    if duplicated:
        problems.append(f"{kind(duplicated)} cells duplicated: {', '.join(sorted(set(duplicated)))}")
    if code_answers and not code_answers & set(names):
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
    return with_cell_ids(cells, [name is not None for name in names]), problems, copies


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
    release's locked cells restored (:func:`restore`); the notebook's metadata is the release's, and its
    format nbformat 4.5 at least, every cell with an id, whichever version it was saved in."""

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        student, assignment, notebook_id = info.get("student"), info.get("assignment"), info.get("notebook")
        try:
            release = release_notebook(assignment, notebook_id)
        except FileNotFoundError:
            self.log.warning("hardened_grading: no release/%s/%s.ipynb to restore the tests from; grading as submitted",
                             assignment, notebook_id)
            return nb, resources
        nb.cells, problems, copies = restore(nb, release, locked_sources(info.get("db_url"), assignment, notebook_id))
        if problems:
            self.log.warning("hardened_grading: student %r: %s; graded with the original tests", student, "; ".join(problems))
        for line in copies:
            self.log.warning("hardened_grading: student %r: %s. If another copy is the answer, delete the others from "
                             "submitted/%s/%s/%s.ipynb and grade it again: nbgrader autograde %s --student %s --force",
                             student, line, student, assignment, notebook_id, assignment, student)
        nb.metadata = copy.deepcopy(release.metadata)
        nb.nbformat, nb.nbformat_minor = 4, max(nb.get("nbformat_minor", 0), 5)  # cell ids (module docstring)
        return nb, resources

