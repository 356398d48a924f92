"""The class report: what to teach again, from the gradebook and the graded notebooks.

After ``nbgrader autograde``, for each exercise: a histogram of the class's scores (from the gradebook),
and the checks that failed most often, each with how many students failed it and one of their
messages (from the checks the judge recorded in ``autograded/``). One self-contained HTML file (the
figures inline), and the same tables as text.

    python -m posenc_course.class_report [COURSE] [--assignment posenc-advanced] [--out FILE] [--students 'demo-*']

The report of ``posenc`` goes to ``reports/class_report.html``, that of another assignment to
``reports/class_report-ASSIGNMENT.html``.
"""

import argparse
import base64
import fnmatch
import html
import io
from collections import Counter
from pathlib import Path

from .feedback import checks_by_exercise, shorten, tested_name
from .layout import ASSIGNMENT, NOTEBOOK, course_root
from .report import exercise_scores

TOP = 5  #: failing checks listed per exercise


def failing_checks(course, students, assignment=ASSIGNMENT):
    """``{exercise: Counter({(test, line, hidden): students})}`` and one message for each such check."""
    counts, examples = {}, {}
    for student in students:
        path = Path(course) / "autograded" / student / assignment / NOTEBOOK
        if not path.exists():
            continue
        for exercise, checks in checks_by_exercise(path).items():
            failed = {(c["test"], c["line"], c["hidden"]): c["message"] for c in checks if not c["passed"]}
            for key, message in failed.items():
                counts.setdefault(exercise, Counter())[key] += 1
                examples.setdefault(key, message)
    return counts, examples


def class_data(course, pattern="*", assignment=ASSIGNMENT):
    """Everything the report shows: ``(scores, counts, examples)`` for the students matching `pattern`."""
    scores = {s: row for s, row in exercise_scores(Path(course) / "gradebook.db", assignment).items()
              if fnmatch.fnmatch(s, pattern)}
    counts, examples = failing_checks(course, sorted(scores), assignment)
    return scores, counts, examples


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


def describe(key):
    test, line, hidden = key
    return f"{tested_name(test)} ({'hidden test' if hidden else f'line {line}'} of {test})"


def report_text(scores, counts, examples):
    lines = [f"Class report: {len(scores)} students"]
    exercises = sorted({ex for row in scores.values() for ex in row})
    for exercise in exercises:
        values = [row[exercise][0] for row in scores.values() if exercise in row]
        maximum = next(row[exercise][1] for row in scores.values() if exercise in row)
        full = sum(1 for v in values if v >= maximum)
        lines.append(f"\n{exercise}: mean {sum(values) / len(values):.2f} of {maximum:g}; full marks {full} of {len(values)}")
        for key, count in counts.get(exercise, Counter()).most_common(TOP):
            lines.append(f"  {count:>4} x {describe(key)}: {shorten(examples[key])}")
    return "\n".join(lines)


def report_html(scores, counts, examples):
    exercises = sorted({ex for row in scores.values() for ex in row})
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>posenc: class report</title><style>",
             "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
             "section{display:flex;gap:2em;align-items:flex-start;border-top:1px solid #ddd;padding:1em 0}"
             "table{border-collapse:collapse;font-size:14px}td,th{padding:4px 8px;border-bottom:1px solid #eee;"
             "text-align:left;vertical-align:top}td.n{text-align:right;font-weight:bold}</style></head><body>",
             f"<h1>Class report</h1><p>{len(scores)} students. For each exercise: the distribution of its "
             "scores, and the checks that failed most often, with how many students failed each and one "
             "message. Teach again where many failed the same check.</p>"]
    for exercise in exercises:
        values = [row[exercise][0] for row in scores.values() if exercise in row]
        maximum = next(row[exercise][1] for row in scores.values() if exercise in row)
        png = base64.b64encode(histogram_png(exercise, values, maximum)).decode("ascii")
        rows = "".join(f"<tr><td class='n'>{count}</td><td><code>{html.escape(describe(key))}</code><br>"
                       f"{html.escape(shorten(examples[key]))}</td></tr>"
                       for key, count in counts.get(exercise, Counter()).most_common(TOP))
        table = (f"<table><tr><th>students</th><th>failed check, and one message</th></tr>{rows}</table>"
                 if rows else "<p>No check failed.</p>")
        parts.append(f"<section id='{exercise}'><img alt='scores of {exercise}' src='data:image/png;base64,{png}'>"
                     f"<div><h2>{exercise}</h2>{table}</div></section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m posenc_course.class_report", description=__doc__.splitlines()[0])
    parser.add_argument("course", nargs="?", default=None, help="the course directory (default: the one you are in)")
    parser.add_argument("--assignment", default=ASSIGNMENT, help=f"the assignment (default: {ASSIGNMENT})")
    parser.add_argument("--out", default=None, help="the HTML file to write, in the course (default: "
                                                    "reports/class_report.html, or class_report-ASSIGNMENT.html)")
    parser.add_argument("--students", default="*", help="a pattern of student ids (default: all)")
    args = parser.parse_args(argv)
    course = course_root(args.course)
    scores, counts, examples = class_data(course, args.students, args.assignment)
    if not scores:
        print(f"class_report: no graded submission of {args.assignment} in {course / 'gradebook.db'} "
              f"matches {args.students!r}")
        return 1
    default = "class_report.html" if args.assignment == ASSIGNMENT else f"class_report-{args.assignment}.html"
    out = course / (args.out or f"reports/{default}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report_html(scores, counts, examples), encoding="utf-8")
    print(report_text(scores, counts, examples))
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
