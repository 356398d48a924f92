"""hardened_grading: nbgrader's autograde, made safe for any nbgrader course.

A sandbox per kernel, limits an instructor sets, a kernel that may die without ending the run, unreadable
and renamed notebooks graded rather than skipped, the release's locked cells restored, feedback that hides
hidden tests, and a whole class graded in parallel and resumably (``hardened-grade``). A course adopts it
with lines of its ``nbgrader_config.py`` (docs/engine.md). Opt-in for a course that wants them: test cells
run in the grader, out of the submission's reach (``ResilientExecute.trusted_tests``), and partial credit
per check (``ResilientExecute.credit_per_check``).

The engine knows a course only through nbgrader's metadata and its configuration: it never imports a
course's own code.
"""

from .terminal import escape_log_records

# Whatever a student wrote is escaped before this process's logs show it (hardened_grading/terminal.py).
escape_log_records()
