"""nbgrader configuration for the posenc course. This folder is the course directory."""

import sys
from pathlib import Path

from posenc_course.course import quiet_dependency_warnings
from posenc_course.layout import EXERCISE_PATTERN
from hardened_grading.preprocessors.release import generate_assignment_preprocessors
from hardened_grading.hooks.submission import GRADED_MARKER
from nbgrader.coursedir import CourseDirectory

c = get_config()  # noqa: F821  (nbgrader provides get_config when it loads this file)

c.CourseDirectory.course_id = "posenc"

# The instructor's view: no warnings of nbgrader's dependencies that mean nothing to you (SQLAlchemy's
# about nbgrader's gradebook code: posenc_course/course.py), and grades.csv with scores to 2 decimals
# (`nbgrader export`: engine/hardened_grading/exporters/grades_csv.py), as everywhere else.
quiet_dependency_warnings()
c.ExportApp.plugin_class = "hardened_grading.exporters.grades_csv.RoundedCsvExportPlugin"

# A student who deleted or edited a test cell is graded with the original cell, not left in
# "needs manual grading".
c.OverwriteCells.add_missing_cells = True

# Per-cell time limit while grading: an endless loop is interrupted after this many seconds,
# that cell (and its exercise's tests) fail, and grading goes on. Every honest cell takes well
# under a second.
c.Execute.timeout = 20

# The written reflections (part (c) of each exercise) are manually graded answers: markdown cells whose
# model answer and rubric sit between solution markers, replaced in the release by a stub that says their
# points (AnswerStubs.written_stub). To leave every reflection ungraded (worth 0 points, its model answer
# still in the feedback after the due date), set this to False and generate the assignment again:
c.AnswerStubs.grade_written_answers = True
c.ClearSolutions.text_stub = "*Write your answer here.*"

# Stubs a student can run (engine/hardened_grading/preprocessors/release.py). A function's body raises, when it is called,
# an error that says the function is not answered yet. A concept question's answer becomes
# `name = ...  # YOUR ANSWER HERE`: Run All goes past it, and its test cell says "not answered yet".
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("not answered yet: write this function here, in place of this line")'}
c.GenerateAssignment.preprocessors = generate_assignment_preprocessors()

# A student's folder is untrusted input (engine/hardened_grading/untrusted/folder.py): links, FIFOs, sockets, devices and
# hard links in submitted/ are removed and logged before anything is read (prepare_submission, which then
# adopts a renamed notebook); after the kernel ends, the graded folder becomes a new one of the grader's own,
# with its regular files only (c.ResilientExecute.max_files and max_folder_mb cap it); feedback is made from such
# folders only.
# Hardened grading (engine/hardened_grading/preprocessors/execute.py): an unreadable notebook is graded as the blank
# release (0 points, reason logged and shown in its feedback); a lone renamed notebook is graded
# as the assignment's one notebook (exercises.ipynb); and the graded notebook is the student's own, run once from top to bottom as
# stock nbgrader runs it, with the release's locked cells restored (engine/hardened_grading/preprocessors/restore.py): deleted,
# edited, reordered or duplicated test cells change nothing, and the student's own cells stay once,
# where they put them.
c.Autograde.exporter_class = "hardened_grading.exporters.notebook.TolerantNotebookExporter"
c.Autograde.pre_convert_hook = "hardened_grading.hooks.submission.prepare_submission"
c.Autograde.sanitize_preprocessors = [
    "hardened_grading.preprocessors.restore.RestoreReleaseCells",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "hardened_grading.preprocessors.metadata.CheckCellMetadata",  # nbgrader's check, its schema checked once
]

# Run student code in the grading kernel (engine/hardened_grading/sandbox/; c.ResilientExecute.kernel_name, by
# default hardened-grading), each submission's kernel in a fresh bubblewrap sandbox: no network, a file system made of the system's libraries, the Python
# environment and the student's own folder (nothing of your home or the course), its own PID namespace
# and a private /tmp. Survive a cell that kills the kernel or exhausts its memory: only the tests that
# need that cell lose points (hardened_grading.preprocessors.execute.ResilientExecute). The kernel is installed nowhere:
# JupyterLab never offers it to a student, and `nbgrader validate` runs the notebook's own kernel.
# The sandbox needs Linux with bubblewrap. "require": without it no submission is graded, and the
# error says what to do; "off" grades without it, only for submissions you trust (on macOS, say).
c.ResilientExecute.sandbox = "require"

# This course's tests run in the grader, out of the submission's reach (the trusted judge,
# engine/hardened_grading/judge/), and score per check: a test cell whose checks pass in part earns that share of
# its points, and its feedback names the checks that failed. Both are off by default, where a test cell
# runs in the sandboxed kernel and scores all or nothing, as in stock nbgrader.
c.ResilientExecute.trusted_tests = True
c.ResilientExecute.credit_per_check = True

# The grading kernel's limits: each is a setting of its own, and its default is the engine's (the site's
# Grading safely, docs/instructors/grading-safely.md, gives each default and what reaching it does). Honest work uses a
# small part of each; a submission that reaches one loses the points of that exercise only. To change
# one, set it here; for example, for a course whose notebooks need more memory:
#   c.ResilientExecute.memory_mb = 8192  # address space of each process, MiB: MemoryError beyond
# The others: processes, cpu_seconds_per_cell, cpu_seconds_total, file_mb, tmp_mb, blas_threads, kernel_log_kb
# (the kernel's own stdout and stderr on yours); what the grader takes from a kernel: max_output_kb (outputs of
# a cell, display updates included), max_comm_kb (comm messages), max_reply_kb (one reply to the judge) and
# submission_seconds (one submission's cells, the cells run again after a crash included); and what a graded
# folder keeps once its kernel has ended: max_files and max_folder_mb (its regular files; links and special files
# never). Extra arguments for the kernel (c.Execute.extra_arguments) are kept, not replaced.
# Files the notebooks read outside the Python environment (a data set), bound read-only in the sandbox:
#   c.ResilientExecute.read_only_paths = ["/srv/datasets/wikitext"]
c.Autograde.autograde_preprocessors = [
    "hardened_grading.preprocessors.execute.ResilientExecute",
    "hardened_grading.preprocessors.inert.InertContent",  # the graded notebook's outputs hold nothing that runs (below)
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "hardened_grading.preprocessors.model_answers.ModelAnswersForGraders",  # below each reflection, in formgrader
    "hardened_grading.preprocessors.metadata.CheckCellMetadata",  # nbgrader's check, its schema checked once
]

# A run that was interrupted part-way (Ctrl-C, killed, a reboot) leaves half-graded folders in autograded/; they are
# removed when nbgrader starts, so that `nbgrader autograde posenc` again finishes the class. Only those: a run holds
# a lock on each submission while it grades it (autograded/STUDENT/.hardened-grading-lock-ASSIGNMENT, beside the
# graded folder; the system lets it go when the run ends, however it ends), and a folder whose lock is held is a
# live run's, left alone, whatever its assignment (engine/hardened_grading/locks.py). Two runs that come to the same
# submission take turns: the second waits for the first, saying so, then skips it as graded (or grades it again
# with --force).
c.Autograde.post_convert_hook = "hardened_grading.hooks.submission.mark_graded"
# The engine's done-marker stays in autograded/: nbgrader never copies it into a student's feedback.
c.CourseDirectory.ignore = [*CourseDirectory.class_traits()["ignore"].default(), GRADED_MARKER]
if sys.argv[1:2] == ["autograde"]:
    from hardened_grading.hooks.unfinished import remove_unfinished

    remove_unfinished(Path(__file__).parent)

# Feedback (engine/hardened_grading/summary.py): a summary of each exercise's points and failed checks at the
# top, and the hidden tests replaced by how many of their checks passed and the failed ones' messages,
# so feedback may go out before the deadline. True shows the full tests, as stock nbgrader does.
c.FeedbackSummary.show_hidden_tests = False
# How much a failed hidden check's message says. "auto" (the default): until the due date in the gradebook
# (`nbgrader db assignment add posenc --duedate=...`, with a student's extension), and when there is
# none, what the check tried and that it was wrong, with no expected value; after it, the full message.
# "before-due" and "after-due" fix one of the two. No message ever holds a concept question's answer.
c.FeedbackSummary.hidden_messages = "auto"
# The summary has a row per exercise: a test cell's exercise is the start of its grade id (ex05_...).
c.FeedbackSummary.part_pattern = EXERCISE_PATTERN
c.FeedbackSummary.part_name = "exercise"
c.GenerateFeedback.pre_convert_hook = "hardened_grading.hooks.submission.secure_graded_folder"
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "hardened_grading.preprocessors.feedback_summary.FeedbackSummary",
    "hardened_grading.preprocessors.model_answers.ModelAnswers",  # after the due date (c.ModelAnswers.shown)
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
# The feedback page is the course's template (its summary first), through an exporter class of its
# own, so that formgrader's pages keep nbgrader's templates.
c.GenerateFeedback.exporter_class = "hardened_grading.exporters.feedback_html.SummaryFirstHTMLExporter"

# Student content never runs where a person views it (engine/hardened_grading/preprocessors/inert.py). The graded notebook's outputs
# keep only what cannot run (text, images, cleaned HTML and markdown; no JavaScript, widget or active SVG:
# InertContent, above), and every HTML page made from a notebook, the feedback and formgrader's view of a
# submission, cleans outputs and markdown again as it renders them. The feedback page also forbids every
# script (a content security policy), MathJax included: its markdown's math is MathML, made when the page is
# (engine/hardened_grading/preprocessors/mathml.py), which browsers render with no script.
c.HTMLExporter.preprocessors = ["hardened_grading.preprocessors.inert.InertContent"]
c.HTMLExporter.filters = {"markdown2html": "hardened_grading.preprocessors.inert.markdown2html"}

# release_feedback releases everyone's feedback it can: one submission placed by hand (no timestamp.txt
# or submission_secret.txt) is named and skipped, not the end of the release (engine/hardened_grading/exchange/).
c.ExchangeFactory.release_feedback = "hardened_grading.exchange.ReleaseFeedback"
# collect copies what students submitted without following a link they left in the exchange, and without any
# FIFO, socket or device (nbgrader's copies the files links point to, with the instructor's permissions).
c.ExchangeFactory.collect = "hardened_grading.exchange.Collect"
# On a shared machine (a JupyterHub), release never makes the exchange writable by every user, and a submission
# is its student's and the graders' alone (engine/hardened_grading/exchange/folders.py; students' configuration:
# docs/instructors/workflow.md, step 2).
c.ExchangeFactory.release_assignment = "hardened_grading.exchange.ReleaseAssignment"
c.ExchangeFactory.submit = "hardened_grading.exchange.Submit"
