"""hardened_grading: nbgrader's autograde, made safe for any nbgrader course.

A sandbox per kernel, limits an instructor sets, a kernel that may die without ending the run, unreadable
and renamed notebooks graded rather than skipped, the release's locked cells restored, feedback that hides
hidden tests, and a whole class graded in parallel and resumably (``hardened-grade``). A course adopts it
with lines of its ``nbgrader_config.py`` (docs/engine.md). Opt-in for a course that wants them: test cells
run in the grader, out of the submission's reach (``ResilientExecute.trusted_tests``), and partial credit
per check (``ResilientExecute.credit_per_check``).

The engine knows a course only through nbgrader's metadata and its configuration: it never imports a
course's own code.

How it plugs into nbgrader: ``nbgrader_config.py`` installs these pieces; ``nbgrader autograde ASSIGNMENT`` stays the command.

- :class:`~.exporters.notebook.TolerantNotebookExporter` (``Autograde.exporter_class``): a submission that cannot be
  read (corrupt, truncated, empty, not JSON) is graded as the blank release with a first cell
  that says why, so it is recorded with 0 points and the rest of the class is graded.
- :func:`~.hooks.submission.adopt_renamed_notebook` (``Autograde.pre_convert_hook``): a student who submitted the
  assignment's one notebook under another name (``exercises (1).ipynb``) has it graded under the
  released name; the file they sent is left as it is.
- :class:`~.preprocessors.restore.RestoreReleaseCells` (first of ``Autograde.sanitize_preprocessors``):
  the graded notebook is the student's own, run once from top to bottom as stock nbgrader runs it,
  with the release's locked cells restored; deleted, edited, reordered or duplicated test cells and
  changed cell metadata therefore cannot change what is run.
- :class:`~.preprocessors.execute.ResilientExecute` (in place of ``Execute`` in ``Autograde.autograde_preprocessors``):
  runs the student's cells in the kernel ``hardened-grading`` (:mod:`.sandbox`,
  sandboxed and memory-limited) and the test cells in this process, out of the student code's
  reach (:mod:`.judge`). A cell that kills the kernel or exhausts its memory limit
  costs only the tests that need it.
- :func:`~.hooks.submission.mark_graded` (``Autograde.post_convert_hook``) and :func:`~.hooks.unfinished.remove_unfinished` (which
  ``nbgrader_config.py`` calls when ``nbgrader autograde`` starts): a folder that a run left half-graded is
  graded again by the next run, and a folder that a live run is grading is never touched, whatever the
  assignment. Importing :mod:`.hooks.unfinished` has nbgrader's Autograde hold each submission's lock while it grades it
  (:func:`~.hooks.unfinished.lock_submissions_while_graded`, :mod:`.locks`).

Its folders follow nbgrader's extension points:

- :mod:`.preprocessors`: the nbgrader preprocessors, one per module (``ResilientExecute`` runs a notebook);
- :mod:`.exporters`: the graded notebook, the feedback page and the grades' CSV;
- :mod:`.hooks`: nbgrader's convert hooks around each submission, and the clean-up of unfinished runs;
- :mod:`.judge`: the trusted judge (set-up, checks, the kernel's agent, the link between them);
- :mod:`.sandbox`: the grading kernel and its sandbox (limits, bubblewrap, cgroups, kernel spec, launcher);
- :mod:`.class_grading`: ``hardened-grade``, a whole class in parallel (command, pool, worker, progress), and
  after it the grade table, the class report and Slurm grading (``hardened-scores``, ``hardened-report``,
  ``hardened-slurm``);
- :mod:`.exchange`: nbgrader's exchange for a machine the students share (release, submit, collect, release
  feedback, one class per module; ``hardened-exchange`` makes its folders private);
- :mod:`.untrusted`: a student's folder and text, handled without trusting them;
- :mod:`.errors`: every exception a user can meet; :mod:`.moved`: the old dotted paths.
"""

from . import moved
from .untrusted.terminal import escape_log_records

# Whatever a student wrote is escaped before this process's logs show it (hardened_grading/untrusted/terminal.py).
escape_log_records()
# A course's nbgrader_config.py that names the engine's old dotted paths still works (hardened_grading/moved.py).
moved.install()
