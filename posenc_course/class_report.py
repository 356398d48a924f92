"""The class report: what to teach again, from the gradebook and the graded notebooks.

After ``nbgrader autograde``, for each exercise: a histogram of the class's scores (from the gradebook),
how many students did not attempt it or only started it, and the mistakes, grouped by what went wrong and
the most common first (from the checks the judge recorded in ``autograded/``). One self-contained HTML file
(the figures inline), and the same tables as text.

- A submission that could not be read (graded as the blank release) is counted apart, once, with why.
- An exercise is *not attempted* when every one of its answers is still the release's stub (``raise
  NotImplementedError("not answered yet...")``, ``name = ...``), *started* when some are: the one definition
  of :mod:`hardened_grading.attempts`, which ``posenc-check`` uses too. Counted apart: an exercise not attempted
  has no mistake, nor has a test cell whose answer is still the stub, or whose checks fail only because some
  answer is ("not answered yet"). An exercise nobody attempted says so, in place of "No mistake".
- A mistake is what failed first in one test cell of one student: the first failed check that is not a
  consequence of another ("not run, because a check before it failed"), or the error that stopped the
  cell. Students whose first failure is the same check with the same message (normalised: what came back
  after "got", and every number, left out) are one group, with a count, their ids and one message.

    python -m posenc_course.class_report [COURSE] [--assignment posenc-advanced] [--out FILE] [--students 'demo-*']

The report of ``posenc`` goes to ``reports/class_report.html``, that of another assignment to
``reports/class_report-ASSIGNMENT.html``.

It is the engine's class report (:mod:`hardened_grading.class_grading.report`, ``hardened-report``) with what this
course knows: its parts are its exercises (:func:`posenc_course.layout.exercise_of`), its stubs say "not answered
yet" or leave a concept answer as ``...`` (:func:`is_stub`), the answer of test cell ``ex05_apply_rope_test`` is
cell ``ex05_apply_rope`` or ``ex05_apply_rope_answer``, and its tests all run in the trusted judge.
"""

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from hardened_grading.class_grading import report
from hardened_grading.class_grading.course import gradebook_of as engine_gradebook_of
from hardened_grading.class_grading.gradebook import safe_url
from hardened_grading.class_grading.report import (CONSEQUENCE, EARLIER_STEP, SHOW_IDS, TOP, TOP_CLASS,  # noqa: F401
                                                   ClassData, first_failure, histogram_png, normalise, report_text,
                                                   top_mistakes, who)

from .layout import ASSIGNMENT, NOTEBOOK_ID, course_root, exercise_of

NOT_ANSWERED = "not answered yet"  #: the release's stubs say it (nbgrader_config.py, ClearSolutions.code_stub)
CONCEPT_STUB = re.compile(r"^\s*\w+\s*=\s*\.\.\.\s*(#.*)?$", re.M)  #: ``ex01_slowest_period = ...  # YOUR ANSWER HERE``
TITLE = "posenc"  #: what heads the HTML page
PART_NAME = "exercise"  #: what a part is called (c.FeedbackSummary.part_name)


def is_stub(source):
    """Whether an answer cell's `source` is still the release's stub: a function that raises "not answered
    yet", or a concept answer left as ``...``. The notebooks' progress cell tests the same (its tracker is made
    of :data:`NOT_ANSWERED` and :data:`CONCEPT_STUB`, ``posenc_course/authoring/notebook.py``)."""
    return NOT_ANSWERED in source or bool(CONCEPT_STUB.search(source))


def answers_of(test):
    """The answer cells a test cell tests: ``ex05_apply_rope_test`` -> ``ex05_apply_rope``, ``ex05_apply_rope_answer``."""
    answer = test.removesuffix("_test")
    return {answer, f"{answer}_answer"}


#: How the report and posenc-check tell an exercise not attempted, in this course
#: (:class:`hardened_grading.attempts.Attempts`).
ATTEMPTS = report.Attempts(is_stub=is_stub, answers_of=answers_of, not_answered=NOT_ANSWERED, checks_only=True)


@dataclass
class Mistake(report.Mistake):
    """:class:`hardened_grading.class_grading.report.Mistake` of this course: its part is its exercise."""

    part_of: Callable = field(default=exercise_of, repr=False, compare=False)


def sort_notebook(notebook, student, data, groups):
    """Put what `student`'s graded `notebook` got wrong into `data` and `groups` (``{key: Mistake}``)."""
    report.sort_notebook(notebook, student, data, groups, part_of=exercise_of, attempts=ATTEMPTS)


def gradebook_of(course, db_url=None):
    """The course's gradebook, as posenc-grade finds it (:func:`hardened_grading.class_grading.gradebook.gradebook_url`):
    `db_url`, else ``CourseDirectory.db_url`` of its nbgrader_config.py (a PostgreSQL gradebook shared by machines),
    else its ``gradebook.db``."""
    return engine_gradebook_of(course, db_url)


def class_data(course, pattern="*", assignment=ASSIGNMENT, db_url=None):
    """:class:`ClassData` of the students matching `pattern` with a graded submission of `assignment`, in the
    gradebook :func:`gradebook_of` names: the exercises' automatic points (the reflections, graded by hand, are
    formgrader's)."""
    return report.class_data(course, assignment, NOTEBOOK_ID, pattern=pattern, part_of=exercise_of,
                             attempts=ATTEMPTS, db_url=db_url, by_hand=False)


def report_html(data):
    return report.report_html(data, title=TITLE, part_name=PART_NAME)


def shown(path):
    """`path` as printed: from the current folder when it is inside it (``demo/reports/...`` under ``make demo``),
    so that an output kept in the repository (``docs/measured/demo.txt``) names no folder of the machine it ran on."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m posenc_course.class_report", description=__doc__.splitlines()[0])
    parser.add_argument("course", nargs="?", default=None, help="the course directory (default: the one you are in)")
    parser.add_argument("--assignment", default=ASSIGNMENT, help=f"the assignment (default: {ASSIGNMENT})")
    parser.add_argument("--out", default=None, help="the HTML file to write, in the course (default: "
                                                    "reports/class_report.html, or class_report-ASSIGNMENT.html)")
    parser.add_argument("--students", default="*", help="a pattern of student ids (default: all)")
    parser.add_argument("--db-url", default=None, help="the gradebook's URL, in place of the course's "
                                                       "CourseDirectory.db_url (postgresql://...)")
    args = parser.parse_args(argv)
    course = course_root(args.course)
    data = class_data(course, args.students, args.assignment, args.db_url)
    if not data.scores:
        print(f"class_report: no graded submission of {args.assignment} in {safe_url(gradebook_of(course, args.db_url))} "
              f"matches {args.students!r}")
        return 1
    out = report.report_path(course, args.assignment, args.out, default_assignment=ASSIGNMENT)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report_html(data), encoding="utf-8")
    print(report_text(data))
    print(f"\nwritten: {shown(out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
