"""Hardened autograding for any nbgrader course, plugged into nbgrader through its configuration hooks.

``nbgrader_config.py`` installs these pieces; ``nbgrader autograde ASSIGNMENT`` stays the command.

- :class:`TolerantNotebookExporter` (``Autograde.exporter_class``): a submission that cannot be
  read (corrupt, truncated, empty, not JSON) is graded as the blank release with a first cell
  that says why, so it is recorded with 0 points and the rest of the class is graded.
- :func:`adopt_renamed_notebook` (``Autograde.pre_convert_hook``): a student who submitted the
  assignment's one notebook under another name (``exercises (1).ipynb``) has it graded under the
  released name; the file they sent is left as it is.
- :class:`hardened_grading.preprocessors.restore.RestoreReleaseCells` (first of ``Autograde.sanitize_preprocessors``):
  the graded notebook is the student's own, run once from top to bottom as stock nbgrader runs it,
  with the release's locked cells restored; deleted, edited, reordered or duplicated test cells and
  changed cell metadata therefore cannot change what is run.
- :class:`ResilientExecute` (in place of ``Execute`` in ``Autograde.autograde_preprocessors``):
  runs the student's cells in the kernel ``hardened-grading`` (:mod:`hardened_grading.sandbox`,
  sandboxed and memory-limited) and the test cells in this process, out of the student code's
  reach (:mod:`hardened_grading.judge`). A cell that kills the kernel or exhausts its memory limit
  costs only the tests that need it.
- :func:`mark_graded` (``Autograde.post_convert_hook``) and :func:`remove_unfinished` (which
  ``nbgrader_config.py`` calls when ``nbgrader autograde`` starts): a folder that a run left half-graded is
  graded again by the next run, and a folder that a live run is grading is never touched, whatever the
  assignment. Importing this module has nbgrader's Autograde hold each submission's lock while it grades it
  (:func:`lock_submissions_while_graded`, :mod:`hardened_grading.locks`).
"""

import functools
import logging

from .nbgrader_app import linear_ignore_globs

log = logging.getLogger("hardened_grading")



linear_ignore_globs()  # nbgrader's copies of a student's folder, in time linear in its files (nbgrader_app)



@functools.lru_cache(maxsize=None)
def _say_once(logger, message):
    """Log `message` as a warning the first time it comes in this process (a grading run)."""
    logger.warning(message)
