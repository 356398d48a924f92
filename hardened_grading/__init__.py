"""hardened_grading: nbgrader's autograde, made safe for any nbgrader course.

A sandbox per kernel, limits an instructor sets, a kernel that may die without ending the run, unreadable
and renamed notebooks graded rather than skipped, the release's locked cells restored, feedback that hides
hidden tests, and a whole class graded in parallel and resumably (``hardened-grade``). A course adopts it
with lines of its ``nbgrader_config.py`` (docs/engine.md). Opt-in for a course that wants them: test cells
run in the grader, out of the submission's reach (``ResilientExecute.trusted_tests``), and partial credit
per check (``ResilientExecute.credit_per_check``).

The engine knows a course only through nbgrader's metadata and its configuration: it never imports a
course's own code.

Its folders follow nbgrader's extension points:

- :mod:`.preprocessors`: the nbgrader preprocessors, one per module (``ResilientExecute`` runs a notebook);
- :mod:`.exporters`: the graded notebook, the feedback page and the grades' CSV;
- :mod:`.hooks`: nbgrader's convert hooks around each submission, and the clean-up of unfinished runs;
- :mod:`.judge`: the trusted judge (set-up, checks, the kernel's agent, the link between them);
- :mod:`.sandbox`: the grading kernel and its sandbox (limits, bubblewrap, cgroups, kernel spec, launcher);
- :mod:`.class_grading`: ``hardened-grade``, a whole class in parallel (command, pool, worker, progress);
- :mod:`.untrusted`: a student's folder and text, handled without trusting them;
- :mod:`.errors`: every exception a user can meet; :mod:`.moved`: the old dotted paths.
"""

from . import moved
from .untrusted.terminal import escape_log_records

# Whatever a student wrote is escaped before this process's logs show it (hardened_grading/untrusted/terminal.py).
escape_log_records()
# A course's nbgrader_config.py that names the engine's old dotted paths still works (hardened_grading/moved.py).
moved.install()
