"""``TolerantNotebookExporter`` (``Autograde.exporter_class``): a submission that cannot be read is graded as the blank release.

A corrupt, truncated, empty or non-JSON notebook is recorded with 0 points and a first cell that says why, and
the rest of the class is graded.
"""

import io
import os
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.exporters.exporter import ResourcesDict

from ..cells import META, UNREADABLE
from ..judge.messages import elide
from ..hooks.submission import _removed_at_start
from ..nbgrader_app import quiet_dependency_warnings
from ..preprocessors.execute import refuse_without_sandbox
from ..preprocessors.restore import release_notebook
from ..untrusted import folder as student_folder

UNREADABLE_WHAT_TO_DO = (
    "What to do: open the notebook you submitted in JupyterLab. If it opens, save it (File > Save "
    "Notebook) and submit it again. If it does not, ask your instructor, who can grade an earlier copy.")


def _reason_cell(reason):
    return nbformat.v4.new_markdown_cell(
        f"**This submission could not be graded as sent, and scores 0.** {reason}\n\n{UNREADABLE_WHAT_TO_DO}",
        metadata={META: {UNREADABLE: reason}})


class TolerantNotebookExporter(NotebookExporter):
    """A NotebookExporter that grades an unreadable submission as the blank release.

    nbgrader makes it once per ``autograde`` run, with the run's whole configuration, before the
    first submission: so it is also where a run that requires the sandbox where it cannot be made
    stops, before grading anything (:func:`refuse_without_sandbox`).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        refuse_without_sandbox(self.config)
        quiet_dependency_warnings()  # the run's log: nbgrader's, not its dependencies' noise

    def from_filename(self, filename, resources=None, **kw):
        try:  # never through a link, never waiting on a FIFO (hardened_grading.untrusted.folder)
            with student_folder.open_regular(filename) as stream:
                notebook = nbformat.read(io.TextIOWrapper(stream, encoding="utf-8"), as_version=4)
        except Exception as error:  # corrupt, truncated, empty, binary, invalid; a link or a special file
            student = (resources or {}).get("nbgrader", {}).get("student", "?")
            assignment = (resources or {}).get("nbgrader", {}).get("assignment", "?")
            removed = _removed_at_start.get(os.path.abspath(filename))
            what = removed or f"{type(error).__name__}: {elide(error, 200)}"
            reason = (f"The file {student_folder.shown(Path(filename).name)} is not a readable Jupyter notebook "
                      f"({what}).")
            self.log.error("hardened_grading: student %r: %s It is graded as the blank release: 0 points. %s",
                           student, reason, "" if removed else "The file itself is left untouched.")
            notebook_id = Path(filename).stem
            notebook = release_notebook(assignment, notebook_id)
            notebook.cells.insert(0, _reason_cell(reason))
        # As nbconvert's own from_filename: the kernel starts in the notebook's folder, the
        # student's own folder in autograded/, the one place its sandbox may write.
        resources = ResourcesDict() if resources is None else resources
        if not resources.get("metadata"):
            resources["metadata"] = ResourcesDict()
        resources["metadata"].update(name=Path(filename).stem, path=os.path.dirname(filename))
        return self.from_notebook_node(notebook, resources=resources, **kw)
