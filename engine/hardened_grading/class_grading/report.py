"""``hardened-report``: the class report, what to teach again, from the gradebook and the graded notebooks.

    hardened-report                                  # in the course directory: its only assignment and notebook
    hardened-report /srv/course --assignment ps1 --notebook problem1 --part-pattern '(sum_of_squares|squares)'
    hardened-report --students 's0*' --out reports/first-group.html

After ``nbgrader autograde`` (or ``hardened-grade``), for each part of the notebook: a histogram of the class's
scores (from the gradebook, :mod:`.grade_table`), how many students did not attempt it or only started it, and the
mistakes, grouped by
what went wrong and the most common first (from the graded notebooks in ``autograded/``). One self-contained HTML
file (the figures inline, no script: the feedback's Content-Security-Policy), and the same tables as text.

- A part is a group of grade cells, named by a part pattern's first group in their grade ids
  (:func:`hardened_grading.summary.part_by_pattern`): ``--part-pattern``, else the course's
  ``c.FeedbackSummary.part_pattern``; without either, each grade cell is a part of its own.
- A submission that could not be read (graded as the blank release) is counted apart, once, with why.
- Whether a student attempted a part is :mod:`hardened_grading.attempts`'s: *not attempted* when every answer its
  test cells test is still the release's stub, *started* when some are; counted apart, and none of the mistakes
  of a part not attempted. A test cell whose answers are all still the stub, or whose failures all say the stub's
  words (:class:`Attempts`), is no mistake. A part nobody attempted says so, in place of "No mistake".
- A mistake is what failed first in one test cell of one student: the first failed check that is not a
  consequence of another ("not run, because a check before it failed"), or the error that stopped the
  cell. Students whose first failure is the same check with the same message (normalised: what came back
  after "got", and every number, left out) are one group, with a count, their ids and one message.
  Without the checks the trusted judge records (``ResilientExecute.trusted_tests`` off), a test cell's error is
  its one failed check.

The report of the course's default assignment (its only one, unless a course's own command says which) goes to
``reports/class_report.html``, that of another to ``reports/class_report-ASSIGNMENT.html``.
"""

import argparse
import base64
import fnmatch
import html
import io
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import nbformat

from ..attempts import (ANSWERED, NOT_ATTEMPTED, NOT_IMPLEMENTED, STARTED, Attempts,  # noqa: F401 (theirs, here)
                        answers_above, cell_state, combined_state, failed_for_a_stub, release_sources, stub_answers,
                        tested_answers)
from ..cells import grade_id, is_test_cell, unreadable_reason
from ..errors import UsageError
from ..judge.checks import HIDDEN_BEGIN
from ..preprocessors.inert import FEEDBACK_CSP
from ..summary import checks_of, each_test_cell, failed_assert, shorten, tested_name
from ..untrusted.terminal import escape
from .course import (configured_parts, course_folder, default_assignment, default_notebook, gradebook_of,
                     part_function)
from .gradebook import safe_url
from .grade_table import part_scores

PROGRAM = "hardened-report"
DESCRIPTION = "The class report: what to teach again, from the gradebook and the graded notebooks."
TOP = 5  #: mistakes listed per part
TOP_CLASS = 10  #: mistakes listed for the whole class, at the top
SHOW_IDS = 8  #: student ids named per group

CONSEQUENCE = "not run, because a check before it failed"
EARLIER_STEP = "not run, because an earlier step failed ("


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
    line: int | None  #: the check's line in it (None: the cell's error, with no check recorded)
    hidden: bool
    message: str  #: one student's message, as it is
    students: list = field(default_factory=list)
    also_failed: int = 0  #: how many more checks of the cell failed, in all of these students
    order: int = 0  #: the test cell's place in the notebook: of two groups as large, the earlier comes first
    part_of: Callable = field(default=each_test_cell, repr=False, compare=False)  #: ``part_of(grade id)``

    @property
    def part(self):
        """The part of the notebook its test cell belongs to."""
        return self.part_of(self.test)

    def describe(self):
        """What failed, and where: ``apply_rope (line 5 of ex05_apply_rope_test)``, ``f (hidden test of f_test)``; a
        cell's error, with no check recorded, names the cell alone (``correct_squares``)."""
        name = tested_name(self.test, self.part_of)
        where = "hidden test" if self.hidden else (f"line {self.line}" if self.line is not None else "")
        if not where:
            return name if name == self.test else f"{name} ({self.test})"
        return f"{name} ({where} of {self.test})"


@dataclass
class ClassData:
    """Everything the report shows."""

    scores: dict  #: ``{student: {part: (score, max_score)}}``, from the gradebook
    unreadable: dict = field(default_factory=dict)  #: ``{student: why}``: graded as the blank release
    not_attempted: dict = field(default_factory=dict)  #: ``{part: {student, ...}}``: every answer still the stub
    started: dict = field(default_factory=dict)  #: ``{part: {student, ...}}``: some answers still the stub
    mistakes: dict = field(default_factory=dict)  #: ``{part: [Mistake, ...]}``, the most common first
    tested: set = field(default_factory=set)  #: the parts with a test cell, in which an attempt is told

    def parts(self):
        """The parts, sorted by name, as the grade table has them."""
        return sorted({part for row in self.scores.values() for part in row})

    def readable(self):
        """The students whose submission could be read."""
        return sorted(s for s in self.scores if s not in self.unreadable)

    def attempted(self, part):
        """The readable students with `part` graded who attempted it (:mod:`hardened_grading.attempts`)."""
        return [s for s in self.readable() if part in self.scores[s] and s not in self.not_attempted.get(part, ())]

    def nobody_attempted(self, part):
        """Whether `part` has a test cell and no readable student attempted it."""
        return part in self.tested and not self.attempted(part)

    def blank(self):
        """The readable submissions that attempted nothing at all: no part with a test cell (all parts, when none is
        known to have one) was attempted. A part graded by hand only (a task, a written answer) says nothing."""
        parts = sorted(self.tested) or self.parts()
        return sorted(s for s in self.scores if s not in self.unreadable and parts
                      and all(s in self.not_attempted.get(part, ()) for part in parts))


def first_failure(checks):
    """The check of one test cell that failed first and is not a consequence of another, or None."""
    failed = [c for c in checks if not c["passed"]]
    return next((c for c in failed if not str(c["message"]).startswith(CONSEQUENCE)), failed[0] if failed else None)


def error_as_check(cell):
    """The error a test cell without recorded checks stopped with, as one failed check (``line`` None), in a list;
    empty for a cell that raised nothing. A bare ``assert`` says what it tried
    (:func:`~hardened_grading.summary.failed_assert`)."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not errors:
        return []
    error = errors[0]
    message = f"{error.get('ename')}: {error.get('evalue')}"
    if error.get("ename") == "AssertionError":
        message = str(error.get("evalue") or "") or failed_assert(error)
    return [{"line": None, "hidden": HIDDEN_BEGIN in cell.get("source", ""), "passed": False, "message": message}]


def release_answers(course, assignment, notebook):
    """``{grade id: source}`` of the answer cells of the released notebook (``release/ASSIGNMENT/NOTEBOOK.ipynb``):
    what a student who did not attempt an answer still has (:func:`hardened_grading.attempts.release_sources`).
    Empty when the course has no release here: nbgrader's checksums then tell a stub."""
    path = Path(course) / "release" / assignment / f"{notebook}.ipynb"
    if not path.exists():
        return {}
    return release_sources(nbformat.read(str(path), as_version=4))


def failed_checks(cell, attempts):
    """The failed checks of a graded test cell: those the judge recorded, else (``attempts.checks_only`` off) its
    error as one (:func:`error_as_check`); and all of them, failed or not."""
    checks = checks_of(cell)
    if not checks and not attempts.checks_only:
        checks = error_as_check(cell)
    return [c for c in checks if not c["passed"]], checks


def add_mistake(groups, test, checks, failed, student, *, order, part_of):
    """Put `student`'s first failure in the test cell `test` into its group of `groups` (``{key: Mistake}``)."""
    first = first_failure(checks)
    key = (test, first["line"], first["hidden"], normalise(first["message"]))
    group = groups.setdefault(key, Mistake(test, first["line"], first["hidden"], str(first["message"]),
                                           order=order, part_of=part_of))
    group.students.append(student)
    group.also_failed += len(failed) - 1


def record_states(data, student, states):
    """Count `student` in `data` as not attempting, or only starting, each part of `states` (``{part: [state of
    each test cell]}``, :func:`hardened_grading.attempts.combined_state`)."""
    for part, each in states.items():
        data.tested.add(part)
        state = combined_state(each)
        if state == NOT_ATTEMPTED:
            data.not_attempted.setdefault(part, set()).add(student)
        elif state == STARTED:
            data.started.setdefault(part, set()).add(student)


def sort_notebook(notebook, student, data, groups, *, part_of=each_test_cell, attempts=Attempts(), stubs=None):
    """Put what `student`'s graded `notebook` got wrong into `data` and `groups` (``{key: Mistake}``).

    A part not attempted has no mistake (:mod:`hardened_grading.attempts`): all its test cells are not attempted;
    nor has a test cell whose answers are all still the stub, or whose failures all say the stub's words.

    Parameters
    ----------
    part_of : callable
        ``part_of(grade id)``: the part a test cell belongs to.
    attempts : Attempts
        How a stub is told, and which answers a test cell tests.
    stubs : dict or None
        ``{grade id: source}`` of the release's answer cells (:func:`release_answers`), for ``attempts.is_stub`` None;
        without it, nbgrader's checksums tell a stub.
    """
    reason = unreadable_reason(notebook)
    if reason:
        data.unreadable[student] = reason
        return
    stubbed, tested = stub_answers(notebook, attempts, stubs), tested_answers(notebook, attempts)
    states = {}
    for number, cell in enumerate(notebook.cells):
        if not is_test_cell(cell):
            continue
        test = grade_id(cell)
        failed, checks = failed_checks(cell, attempts)
        state = cell_state(tested[test], stubbed, failed, attempts)
        states.setdefault(part_of(test), []).append(state)
        if failed and state != NOT_ATTEMPTED and not failed_for_a_stub(failed, attempts):
            add_mistake(groups, test, checks, failed, student, order=number, part_of=part_of)
    record_states(data, student, states)


def class_data(course, assignment, notebook, *, pattern="*", part_of=each_test_cell, attempts=Attempts(),
               db_url=None, by_hand=None):
    """:class:`ClassData` of the students matching `pattern` with a graded submission of `notebook` (nbgrader's
    notebook id) of `assignment`, in the course's gradebook (:func:`~.course.gradebook_of`: `db_url`, else the
    course's) and its ``autograded/`` folder. `by_hand`: where the points given by hand go, as
    :func:`~.grade_table.part_scores` says (False: left out, the report of the automatic points)."""
    scores = {s: row for s, row in part_scores(gradebook_of(course, db_url), assignment, notebook,
                                               part_of=part_of, by_hand=by_hand).items()
              if fnmatch.fnmatch(s, pattern)}
    data, groups = ClassData(scores), {}
    stubs = release_answers(course, assignment, notebook) if attempts.is_stub is None else {}
    for student in sorted(scores):
        path = Path(course) / "autograded" / student / assignment / f"{notebook}.ipynb"
        if path.exists():
            sort_notebook(nbformat.read(str(path), as_version=4), student, data, groups, part_of=part_of,
                          attempts=attempts, stubs=stubs)
    for group in sorted(groups.values(), key=lambda g: (-len(g.students), g.order, g.line or 0)):
        data.mistakes.setdefault(group.part, []).append(group)
    return data


NO_FIGURE = ("no figure: matplotlib is not installed here (pip install 'hardened-grading[report]' brings it); the "
             "line above says the scores")


def histogram_png(part, values, maximum):
    """A PNG (bytes) of the scores' distribution in one part; None without matplotlib (the engine's extra
    ``report``), the report then says so in its place."""
    try:
        import matplotlib
    except ImportError:
        return None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(4.2, 2.4), dpi=100)
    bins = [i * maximum / 10 for i in range(11)] if maximum > 0 else 10
    axes.hist(values, bins=bins, color="#4c72b0", edgecolor="white")
    if maximum > 0:
        axes.set_xlim(0, maximum)
    axes.set_xlabel(f"points (of {maximum:g})")
    axes.set_ylabel("students")
    axes.set_title(f"{part}: mean {sum(values) / len(values):.2f}", fontsize=10)
    axes.yaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()


def who(students):
    named = ", ".join(students[:SHOW_IDS])
    return named + (f" and {len(students) - SHOW_IDS} more" if len(students) > SHOW_IDS else "")


def part_line(data, part):
    """``(scores, maximum, one line)`` of one part: its mean, full marks, attempted (of them, started: some answers
    still the stub), not attempted (every answer still the stub) and unreadable."""
    values = [row[part][0] for row in data.scores.values() if part in row]
    maximum = next(row[part][1] for row in data.scores.values() if part in row)
    full = sum(1 for v in values if v >= maximum)
    counts = (f"attempted {len(data.attempted(part))} ({len(data.started.get(part, ()))} of them only {STARTED}: "
              f"some answers still the stub); {NOT_ATTEMPTED} {len(data.not_attempted.get(part, ()))}"
              if part in data.tested else "attempts not known (no test cell)")
    return (values, maximum, f"mean {sum(values) / len(values):.2f} of {maximum:g}; full marks {full} of "
                             f"{len(values)}; {counts}; unreadable {len(data.unreadable)}")


NOBODY_ATTEMPTED = "Nobody attempted it: every answer of every readable submission is still the stub."
NOTHING_ATTEMPTED = "Nobody attempted anything: every answer of every readable submission is still the stub."
NO_MISTAKE = "No mistake."


def no_mistake_words(data, part=None):
    """What a report says where it lists no mistake: of `part`, or (None) of the whole class; that nobody attempted
    it, when nobody did (:meth:`ClassData.nobody_attempted`), else "No mistake."."""
    if part is not None:
        return NOBODY_ATTEMPTED if data.nobody_attempted(part) else NO_MISTAKE
    tested = sorted(data.tested)
    return NOTHING_ATTEMPTED if tested and all(data.nobody_attempted(p) for p in tested) else NO_MISTAKE


def top_mistakes(data, count=TOP_CLASS):
    every = [g for groups in data.mistakes.values() for g in groups]
    return sorted(every, key=lambda g: (-len(g.students), g.order, g.line or 0))[:count]


def report_text(data):
    """The report as plain text, for a terminal: what a student's code wrote is escaped."""
    lines = [f"Class report: {len(data.scores)} students"]
    if data.unreadable:
        lines.append(f"  could not be read, graded as the blank release (0 points): {len(data.unreadable)}")
        lines += [f"    {student}: {escape(why)}" for student, why in sorted(data.unreadable.items())]
    blank = data.blank()
    if blank:
        lines.append(f"  attempted nothing (every answer still the stub): {len(blank)}: {who(blank)}")
    for part in data.parts():
        _, _, line = part_line(data, part)
        lines.append(f"\n{part}: {line}")
        groups = data.mistakes.get(part, [])
        if not groups and data.nobody_attempted(part):
            lines.append(f"  {NOBODY_ATTEMPTED}")
        for group in groups[:TOP]:
            lines.append(f"  {len(group.students):>4} x {group.describe()}: {escape(shorten(group.message))}  "
                         f"[{who(group.students)}]")  # a message may quote what a student's code wrote
        if len(groups) > TOP:
            lines.append(f"         and {len(groups) - TOP} more mistakes, each by fewer students")
    return "\n".join(lines)


def _mistake_rows(groups, with_part=False):
    return "".join(
        f"<tr><td class='n'>{len(g.students)}</td>" + (f"<td>{html.escape(g.part)}</td>" if with_part else "")
        + f"<td><code>{html.escape(g.describe())}</code><br>{html.escape(shorten(g.message))}"
        + (f"<br><small>and {g.also_failed} later failed checks of the cell</small>" if g.also_failed else "")
        + f"</td><td class='who'>{html.escape(who(g.students))}</td></tr>"
        for g in groups)


STYLE = ("body{font-family:sans-serif;max-width:1150px;margin:2em auto;color:#222}"
         "section{display:flex;gap:2em;align-items:flex-start;border-top:1px solid #ddd;padding:1em 0}"
         "table{border-collapse:collapse;font-size:14px}td,th{padding:4px 8px;border-bottom:1px solid #eee;"
         "text-align:left;vertical-align:top}td.n{text-align:right;font-weight:bold}"
         "td.who{color:#555;font-size:12px;max-width:14em}.apart{color:#555}")


def report_html(data, *, title, part_name="part"):
    """The report as one HTML page: `title` (the course's or the assignment's name) heads it, and `part_name` is
    what a part is called (``c.FeedbackSummary.part_name``: "exercise", "problem"). The messages are the students'
    (escaped); the page runs no script, as the feedback (:data:`hardened_grading.preprocessors.inert.FEEDBACK_CSP`)."""
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>"
             f"<meta http-equiv='Content-Security-Policy' content=\"{FEEDBACK_CSP}\">"
             f"<title>{html.escape(title)}: class report</title><style>",
             f"{STYLE}</style></head><body>",
             f"<h1>Class report</h1><p>{len(data.scores)} students. The mistakes are grouped by what went wrong: "
             "students whose first failed check in a test cell is the same, with the same message, are one "
             "group. Parts not attempted (every answer still the stub) and unreadable files are counted apart. "
             "Teach again where many made the same mistake.</p>"]
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
        f"<table><tr><th>students</th><th>{html.escape(part_name)}</th><th>what went wrong first, and one message</th>"
        f"<th>who</th></tr>{_mistake_rows(top, with_part=True)}</table>" if top
        else f"<p>{html.escape(no_mistake_words(data))}</p>"))
    for part in data.parts():
        values, maximum, line = part_line(data, part)
        png = histogram_png(part, values, maximum)
        groups = data.mistakes.get(part, [])
        more = f"<p>and {len(groups) - TOP} more mistakes, each by fewer students</p>" if len(groups) > TOP else ""
        table = (f"<table><tr><th>students</th><th>what went wrong first, and one message</th><th>who</th></tr>"
                 f"{_mistake_rows(groups[:TOP])}</table>{more}" if groups
                 else f"<p>{html.escape(no_mistake_words(data, part))}</p>")
        name = html.escape(part, quote=True)
        figure = (f"<img alt='scores of {name}' src='data:image/png;base64,{base64.b64encode(png).decode('ascii')}'>"
                  if png is not None else f"<p class='apart'>{html.escape(NO_FIGURE)}</p>")
        parts.append(f"<section id='{name}'>{figure}"
                     f"<div><h2>{name}</h2><p class='apart'>{html.escape(line)}</p>{table}</div></section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def report_path(course, assignment, out=None, *, default_assignment=None):
    """Where the HTML report goes: `out`, in the course; else ``reports/class_report.html`` for the course's
    `default_assignment`, ``reports/class_report-ASSIGNMENT.html`` for another."""
    name = "class_report.html" if assignment == default_assignment else f"class_report-{assignment}.html"
    return Path(course) / (out or f"reports/{name}")


def only_assignment(course):
    """The course's only assignment, or None when it has several or none (:func:`~.course.default_assignment`)."""
    try:
        return default_assignment(course)
    except UsageError:
        return None


@dataclass(frozen=True)
class Settings:
    """A course's own defaults for :func:`write_report`, where nbgrader's layout and config do not say them."""

    assignment: str | None = None  #: the course's default assignment (None: its only one in source/)
    notebook: str | None = None  #: its notebook, as nbgrader names it (None: the assignment's only one)
    part_pattern: str | None = None  #: None: the course's c.FeedbackSummary.part_pattern
    part_name: str | None = None  #: None: the course's c.FeedbackSummary.part_name, else "part"
    title: str | None = None  #: what heads the HTML page (None: the assignment)
    attempts: Attempts = Attempts()
    program: str = PROGRAM  #: the command, as its messages name it


def write_report(*, course=None, assignment=None, notebook=None, part_pattern=None, students="*", out=None,
                 db_url=None, settings=Settings()):
    """Write the class report of a course's `assignment` (HTML, :func:`report_path`); return its path and its text.

    Each argument not given is `settings`' (a course's own command), else what the course says (:mod:`.course`).

    Raises
    ------
    UsageError
        When the course, its assignment or notebook cannot be found, the part pattern is not a regular expression,
        or no graded submission matches `students`.
    """
    course = course_folder(course)
    default = settings.assignment or only_assignment(course)
    assignment = assignment or default or default_assignment(course)  # none: the error says which there are
    notebook = notebook or settings.notebook or default_notebook(course, assignment)
    pattern, configured_name = configured_parts(course)
    pattern = next(p for p in (part_pattern, settings.part_pattern, pattern) if p is not None)
    data = class_data(course, assignment, notebook, pattern=students, part_of=part_function(pattern),
                      attempts=settings.attempts, db_url=db_url)
    if not data.scores:
        raise UsageError(f"no graded submission of {assignment} in {safe_url(gradebook_of(course, db_url))} "
                         f"matches {students!r}")
    path = report_path(course, assignment, out, default_assignment=default)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_html(data, title=settings.title or assignment,
                                part_name=settings.part_name or configured_name), encoding="utf-8")
    return path, report_text(data)


def parser(program=PROGRAM, default_assignment=None):
    """The command line; a course's own command gives its `default_assignment`."""
    p = argparse.ArgumentParser(prog=program, description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("course", nargs="?", default=None, help="the course directory (default: the one you are in)")
    p.add_argument("--assignment", default=default_assignment,
                   help=f"the assignment (default: {default_assignment or 'the only one in source/'})")
    p.add_argument("--notebook", default=None, help="the notebook, as nbgrader names it: problem1 for problem1.ipynb "
                                                    "(default: the assignment's only one)")
    p.add_argument("--part-pattern", default=None, metavar="REGEX",
                   help="its first group, in a grade id, names the cell's part (default: the course's "
                        "c.FeedbackSummary.part_pattern; '': each test cell is a part)")
    p.add_argument("--out", default=None, help="the HTML file to write, in the course (default: "
                                               "reports/class_report.html, or class_report-ASSIGNMENT.html)")
    p.add_argument("--students", default="*", help="a pattern of student ids (default: all)")
    p.add_argument("--db-url", default=None, help="the gradebook's URL, in place of the course's "
                                                  "CourseDirectory.db_url (postgresql://...)")
    return p


def main(argv=None, settings=Settings()):
    """Write the report as the command line `argv` says, print its text; return the exit code (1: nothing to report,
    2: a usage error)."""
    args = parser(settings.program, settings.assignment).parse_args(argv)
    try:
        path, text = write_report(course=args.course, assignment=args.assignment, notebook=args.notebook,
                                  part_pattern=args.part_pattern, students=args.students, out=args.out,
                                  db_url=args.db_url, settings=settings)
    except UsageError as error:
        print(f"{settings.program}: {error}", file=sys.stderr)
        return 1 if str(error).startswith("no graded submission") else 2
    print(text)
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
