"""nbgrader configuration for the posenc course. This folder is the course directory."""

import sys
from pathlib import Path

c = get_config()  # noqa: F821  (nbgrader provides get_config when it loads this file)

c.CourseDirectory.course_id = "posenc"

# A student who deleted or edited a test cell is graded with the original cell, not left in
# "needs manual grading".
c.OverwriteCells.add_missing_cells = True

# Per-cell time limit while grading: an endless loop is interrupted after this many seconds,
# that cell (and its exercise's tests) fail, and grading goes on. Every honest cell takes well
# under a second.
c.Execute.timeout = 20

# The written reflections (part (c) of each exercise) are ungraded markdown cells whose model
# answer sits between solution markers. nbgrader clears markers outside solution cells only when
# this check is off; every graded answer is still a proper solution cell.
c.ClearSolutions.enforce_metadata = False
c.ClearSolutions.text_stub = "*Write your answer here.*"

# Hardened grading (posenc_course/grading.py): an unreadable notebook is graded as the blank
# release (0 points, reason logged and shown in its feedback); a lone renamed notebook is graded
# as exercises.ipynb; and every submission is rebuilt on the released notebook with only the
# student's answer cells, so that deleted, edited, reordered or duplicated test cells change
# nothing.
c.Autograde.exporter_class = "posenc_course.grading.TolerantNotebookExporter"
c.Autograde.pre_convert_hook = "posenc_course.grading.adopt_renamed_notebook"
c.Autograde.sanitize_preprocessors = [
    "posenc_course.grading.RebuildFromRelease",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Run student code in the kernel posenc-grader (posenc_course/kernel.py, installed by `make
# install`): a bubblewrap sandbox that hides the course's private parts, under a memory limit.
# Survive a cell that kills the kernel or exhausts its memory: only the tests that need that cell
# lose points (posenc_course.grading.ResilientExecute).
c.Execute.kernel_name = "posenc-grader"
# The sandbox needs Linux with bubblewrap. "require": without it no submission is graded, and the
# error says what to do; "off" grades without it, only for submissions you trust (on macOS, say).
# The kernel's memory limit is c.ResilientExecute.memory_mb (MiB).
c.ResilientExecute.sandbox = "require"
c.Autograde.autograde_preprocessors = [
    "posenc_course.grading.ResilientExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# A run that was interrupted part-way leaves half-graded folders in autograded/; they are removed
# when nbgrader starts, so that `nbgrader autograde posenc` again finishes the class.
c.Autograde.post_convert_hook = "posenc_course.grading.mark_graded"
if sys.argv[1:2] == ["autograde"]:
    from posenc_course.grading import remove_unfinished

    remove_unfinished(Path(__file__).parent)
