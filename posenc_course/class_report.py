"""The class report: what to teach again, from the gradebook and the graded notebooks.

After ``nbgrader autograde``, for each exercise: a histogram of the class's scores (from the gradebook),
how many students did not attempt it, and the mistakes, grouped by what went wrong and the most common
first (from the checks the judge recorded in ``autograded/``). One self-contained HTML file (the figures
inline), and the same tables as text.

- A submission that could not be read (graded as the blank release) is counted apart, once, with why.
- An exercise part whose answer is still the release's stub (``raise NotImplementedError("not answered
  yet...")``, ``name = ...``), or whose checks fail only because some answer is ("not answered yet"), is
  *not attempted*: counted apart, not a mistake.
- A mistake is what failed first in one test cell of one student: the first failed check that is not a
  consequence of another ("not run, because a check before it failed"), or the error that stopped the
  cell. Students whose first failure is the same check with the same message (normalised: what came back
  after "got", and every number, left out) are one group, with a count, their ids and one message.

    python -m posenc_course.class_report [COURSE] [--assignment posenc-advanced] [--out FILE] [--students 'demo-*']

The report of ``posenc`` goes to ``reports/class_report.html``, that of another assignment to
``reports/class_report-ASSIGNMENT.html``.
"""

import argparse
import base64
import fnmatch
import html
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from hardened_grading.feedback import checks_of, shorten, tested_name
from hardened_grading.grade_class import gradebook_url, safe_url
from hardened_grading.inert import FEEDBACK_CSP
from hardened_grading.terminal import escape
from .layout import (ASSIGNMENT, NOTEBOOK, course_root, exercise_of, grade_id, is_answer_cell, is_test_cell,
                     unreadable_reason)
from .report import exercise_scores

TOP = 5  #: mistakes listed per exercise
TOP_CLASS = 10  #: mistakes listed for the whole class, at the top
SHOW_IDS = 8  #: student ids named per group

NOT_ANSWERED = "not answered yet"  #: the release's stubs say it (nbgrader_config.py, ClearSolutions.code_stub)
_CONCEPT_STUB = re.compile(r"^\s*\w+\s*=\s*\.\.\.\s*(#.*)?$", re.M)  #: ``ex01_slowest_period = ...  # YOUR ANSWER HERE``
CONSEQUENCE = "not run, because a check before it failed"
EARLIER_STEP = "not run, because an earlier step failed ("


def is_stub(source):
    """Whether an answer cell's `source` is still the release's stub: a function that raises "not answered
    yet", or a concept answer left as ``...``."""
    return NOT_ANSWERED in source or bool(_CONCEPT_STUB.search(source))


def normalise(message):
    """What a failure's `message` has in common across students who made the same mistake: on one line,
    without what came back (after the last " got ", when it says what was expected) and with every number
    as ``#``."""
    text = " ".join(str(message).split())
    if text.startswith(EARLIER_STEP) and text.endswith(")"):
        text = text[len(EARLIER_STEP):-1]
    head, sep, _ = text.rpartition(" got ")
    if sep and "expected" in head:
        text = head
    text = re.sub(r"0x[0-9a-fA-F]+", "0x#", text)
    return re.sub(r"(?<![\w.])[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", "#", text)


@dataclass
class Mistake:
    """Students whose first failure in one test cell is the same: one check, one normalised message."""

    test: str  #: the test cell
    line: int  #: the check's line in it
    hidden: bool
    message: str  #: one student's message, as it is
    students: list = field(default_factory=list)
    also_failed: int = 0  #: how many more checks of the cell failed, in all of these students
    order: int = 0  #: the test cell's place in the notebook: of two groups as large, the earlier comes first

    @property
    def exercise(self):
        return exercise_of(self.test)

    def describe(self):
        return f"{tested_name(self.test, exercise_of)} ({'hidden test' if self.hidden else f'line {self.line}'} of {self.test})"


@dataclass
class ClassData:
    """Everything the report shows."""

    scores: dict  #: ``{student: {exercise: (score, max_score)}}``, from the gradebook
    unreadable: dict = field(default_factory=dict)  #: ``{student: why}``: graded as the blank release
    not_attempted: dict = field(default_factory=dict)  #: ``{exercise: {student, ...}}``
    mistakes: dict = field(default_factory=dict)  #: ``{exercise: [Mistake, ...]}``, the most common first

    def blank(self):
        """The readable submissions that attempted nothing at all."""
        exercises = {ex for row in self.scores.values() for ex in row}
        return sorted(s for s in self.scores if s not in self.unreadable and exercises
                      and all(s in self.not_attempted.get(ex, ()) for ex in exercises))


def first_failure(checks):
    """The check of one test cell that failed first and is not a consequence of another, or None."""
    failed = [c for c in checks if not c["passed"]]
    return next((c for c in failed if not str(c["message"]).startswith(CONSEQUENCE)), failed[0] if failed else None)


def sort_notebook(notebook, student, data, groups):
    """Put what `student`'s graded `notebook` got wrong into `data` and `groups` (``{key: Mistake}``)."""
    reason = unreadable_reason(notebook)
    if reason:
        data.unreadable[student] = reason
        return
    stubs = {grade_id(c) for c in notebook.cells if is_answer_cell(c) and is_stub(c.source)}
    for number, cell in enumerate(notebook.cells):
        if not is_test_cell(cell):
            continue
        test, checks = grade_id(cell), checks_of(cell)
        failed = [c for c in checks if not c["passed"]]
        if not failed:
            continue
        answer = test.removesuffix("_test")
        if {answer, f"{answer}_answer"} & stubs or all(NOT_ANSWERED in str(c["message"]) for c in failed):
            data.not_attempted.setdefault(exercise_of(test), set()).add(student)
            continue
        first = first_failure(checks)
        key = (test, first["line"], first["hidden"], normalise(first["message"]))
        group = groups.setdefault(key, Mistake(test, first["line"], first["hidden"], str(first["message"]),
                                                 order=number))
        group.students.append(student)
        group.also_failed += len(failed) - 1


def gradebook_of(course, db_url=None):
    """The course's gradebook, as posenc-grade finds it (:func:`hardened_grading.grade_class.gradebook_url`): `db_url`,
    else ``CourseDirectory.db_url`` of its nbgrader_config.py (a PostgreSQL gradebook shared by machines), else its
    ``gradebook.db``."""
    from .course import load_config

    return gradebook_url(load_config(course), course, db_url)


def class_data(course, pattern="*", assignment=ASSIGNMENT, db_url=None):
    """:class:`ClassData` of the students matching `pattern` with a graded submission of `assignment`, in the
    gradebook :func:`gradebook_of` names."""
    scores = {s: row for s, row in exercise_scores(gradebook_of(course, db_url), assignment).items()
              if fnmatch.fnmatch(s, pattern)}
    data, groups = ClassData(scores), {}
    for student in sorted(scores):
        path = Path(course) / "autograded" / student / assignment / NOTEBOOK
        if path.exists():
            sort_notebook(nbformat.read(str(path), as_version=4), student, data, groups)
    for group in sorted(groups.values(), key=lambda g: (-len(g.students), g.order, g.line)):
        data.mistakes.setdefault(group.exercise, []).append(group)
    return data


def histogram_png(exercise, values, maximum):
    """A PNG (bytes) of the scores' distribution in one exercise."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(4.2, 2.4), dpi=100)
    bins = [i * maximum / 10 for i in range(11)]
    axes.hist(values, bins=bins, color="#4c72b0", edgecolor="white")
    axes.set_xlim(0, maximum)
    axes.set_xlabel(f"points (of {maximum:g})")
    axes.set_ylabel("students")
    axes.set_title(f"{exercise}: mean {sum(values) / len(values):.2f}", fontsize=10)
    axes.yaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()


def who(students):
    named = ", ".join(students[:SHOW_IDS])
    return named + (f" and {len(students) - SHOW_IDS} more" if len(students) > SHOW_IDS else "")


def exercise_line(data, exercise):
    values = [row[exercise][0] for row in data.scores.values() if exercise in row]
    maximum = next(row[exercise][1] for row in data.scores.values() if exercise in row)
    full = sum(1 for v in values if v >= maximum)
    attempted = len(data.not_attempted.get(exercise, ()))
    return (values, maximum, f"mean {sum(values) / len(values):.2f} of {maximum:g}; full marks {full} of "
                             f"{len(values)}; not attempted {attempted}; unreadable {len(data.unreadable)}")


def top_mistakes(data, count=TOP_CLASS):
    every = [g for groups in data.mistakes.values() for g in groups]
    return sorted(every, key=lambda g: (-len(g.students), g.order, g.line))[:count]


def report_text(data):
    lines = [f"Class report: {len(data.scores)} students"]
    if data.unreadable:
        lines.append(f"  could not be read, graded as the blank release (0 points): {len(data.unreadable)}")
        lines += [f"    {student}: {escape(why)}" for student, why in sorted(data.unreadable.items())]
    blank = data.blank()
    if blank:
        lines.append(f"  attempted nothing (every answer still the stub): {len(blank)}: {who(blank)}")
    exercises = sorted({ex for row in data.scores.values() for ex in row})
    for exercise in exercises:
        _, _, line = exercise_line(data, exercise)
        lines.append(f"\n{exercise}: {line}")
        groups = data.mistakes.get(exercise, [])
        for group in groups[:TOP]:
            lines.append(f"  {len(group.students):>4} x {group.describe()}: {escape(shorten(group.message))}  "
                         f"[{who(group.students)}]")  # a message may quote what a student's code wrote
        if len(groups) > TOP:
            lines.append(f"         and {len(groups) - TOP} more mistakes, each by fewer students")
    return "\n".join(lines)


def _mistake_rows(groups, with_exercise=False):
    return "".join(
        f"<tr><td class='n'>{len(g.students)}</td>" + (f"<td>{g.exercise}</td>" if with_exercise else "")
        + f"<td><code>{html.escape(g.describe())}</code><br>{html.escape(shorten(g.message))}"
        + (f"<br><small>and {g.also_failed} later failed checks of the cell</small>" if g.also_failed else "")
        + f"</td><td class='who'>{html.escape(who(g.students))}</td></tr>"
        for g in groups)


def report_html(data):
    exercises = sorted({ex for row in data.scores.values() for ex in row})
    # the messages are the students' (escaped); the page runs no script, as the feedback (hardened_grading/inert.py)
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>"
             f"<meta http-equiv='Content-Security-Policy' content=\"{FEEDBACK_CSP}\">"
             "<title>posenc: class report</title><style>",
             "body{font-family:sans-serif;max-width:1150px;margin:2em auto;color:#222}"
             "section{display:flex;gap:2em;align-items:flex-start;border-top:1px solid #ddd;padding:1em 0}"
             "table{border-collapse:collapse;font-size:14px}td,th{padding:4px 8px;border-bottom:1px solid #eee;"
             "text-align:left;vertical-align:top}td.n{text-align:right;font-weight:bold}"
             "td.who{color:#555;font-size:12px;max-width:14em}.apart{color:#555}</style></head><body>",
             f"<h1>Class report</h1><p>{len(data.scores)} students. The mistakes are grouped by what went wrong: "
             "students whose first failed check in a test cell is the same, with the same message, are one "
             "group. Not attempted answers (still the stub) and unreadable files are counted apart. Teach again "
             "where many made the same mistake.</p>"]
    apart = []
    if data.unreadable:
        apart.append(f"<li><b>{len(data.unreadable)} could not be read</b>, graded as the blank release (0 points): "
                     + "; ".join(f"{html.escape(s)} ({html.escape(why)})" for s, why in sorted(data.unreadable.items()))
                     + "</li>")
    if data.blank():
        apart.append(f"<li><b>{len(data.blank())} attempted nothing</b> (every answer still the stub): "
                     f"{html.escape(who(data.blank()))}</li>")
    if apart:
        parts.append(f"<ul class='apart'>{''.join(apart)}</ul>")
    top = top_mistakes(data)
    parts.append("<h2>The most common mistakes</h2>" + (
        f"<table><tr><th>students</th><th>exercise</th><th>what went wrong first, and one message</th>"
        f"<th>who</th></tr>{_mistake_rows(top, with_exercise=True)}</table>" if top else "<p>No mistake.</p>"))
    for exercise in exercises:
        values, maximum, line = exercise_line(data, exercise)
        png = base64.b64encode(histogram_png(exercise, values, maximum)).decode("ascii")
        groups = data.mistakes.get(exercise, [])
        more = f"<p>and {len(groups) - TOP} more mistakes, each by fewer students</p>" if len(groups) > TOP else ""
        table = (f"<table><tr><th>students</th><th>what went wrong first, and one message</th><th>who</th></tr>"
                 f"{_mistake_rows(groups[:TOP])}</table>{more}" if groups else "<p>No mistake.</p>")
        parts.append(f"<section id='{exercise}'><img alt='scores of {exercise}' src='data:image/png;base64,{png}'>"
                     f"<div><h2>{exercise}</h2><p class='apart'>{html.escape(line)}</p>{table}</div></section>")
    parts.append("</body></html>")
    return "\n".join(parts)


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
    default = "class_report.html" if args.assignment == ASSIGNMENT else f"class_report-{args.assignment}.html"
    out = course / (args.out or f"reports/{default}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report_html(data), encoding="utf-8")
    print(report_text(data))
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
