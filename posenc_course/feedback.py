"""Feedback a student learns from: a summary at the top, and no hidden test shown.

``nbgrader generate_feedback`` runs :class:`FeedbackSummary` after nbgrader's ``GetGrades``
(``GenerateFeedback.preprocessors`` in ``nbgrader_config.py``), and renders the course's template
``posenc_course/templates/posenc_feedback``, which puts the summary first.

- :func:`summary` is one row per exercise with its points and, for each exercise that lost points,
  the failing checks with their messages (the function, the input, what was expected, what came back).
  ``posenc-check`` prints the same summary.
- Unless ``FeedbackSummary.show_hidden_tests`` is set, each test cell shows its visible part and, in
  place of its hidden tests, a line such as ``# hidden tests: 7 checks, 5 passed`` followed by the
  messages of the failed ones; tracebacks that would quote the tests are cut to their last line.
"""

import html
from pathlib import Path

import nbformat

import nbgrader
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from .judge import HIDDEN_BEGIN, HIDDEN_END, elide
from .layout import exercise_of, grade_id, is_test_cell, nbgrader_meta, unreadable_reason

MESSAGE_LENGTH = 300  #: a failing check's message is cut to this many characters


def checks_of(cell):
    """The checks the judge recorded for a graded test cell (dicts of :class:`posenc_course.judge.Check`)."""
    return cell.get("metadata", {}).get("posenc", {}).get("checks", [])


def checks_by_exercise(autograded_path):
    """``{exercise: [check, ...]}`` of a graded notebook: every check of its test cells, in order, each a
    dict with the test cell, its line, whether it is hidden, whether it passed, and its message."""
    notebook = nbformat.read(str(autograded_path), as_version=4)
    found = {}
    for cell in notebook.cells:
        if is_test_cell(cell):
            for check in checks_of(cell):
                found.setdefault(exercise_of(grade_id(cell)), []).append({
                    "test": grade_id(cell), "line": check["line"], "hidden": check["hidden"],
                    "passed": bool(check["passed"]), "message": check["message"]})
    return found


def tested_name(test_id):
    """``ex05_apply_rope_test`` -> ``apply_rope``: what a test cell tests."""
    return test_id.removesuffix("_test").split("_", 1)[-1]


def summary(notebook):
    """``[{exercise, score, max_score, failed: [{name, test, hidden, message}]}]``, in order.

    Scores are the cells' ``nbgrader.score`` where nbgrader put it (the gradebook's, in feedback), else the
    judge's own score in ``posenc.score``.
    """
    rows = {}
    for cell in notebook.cells:
        if not is_test_cell(cell):
            continue
        meta, test_id = nbgrader_meta(cell), grade_id(cell)
        row = rows.setdefault(exercise_of(test_id), {"exercise": exercise_of(test_id), "score": 0.0,
                                                     "max_score": 0.0, "failed": []})
        points = float(meta.get("points", 0))
        judged = cell.get("metadata", {}).get("posenc", {})
        score = meta.get("score", judged.get("score", points))
        row["score"] += float(score if score is not None else 0)
        row["max_score"] += points
        for check in checks_of(cell):
            if not check["passed"]:
                row["failed"].append({"name": tested_name(test_id), "test": test_id, "hidden": check["hidden"],
                                      "message": shorten(check["message"])})
        if not checks_of(cell) and float(score or 0) < points:
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            message = f"{errors[0].get('ename')}: {errors[0].get('evalue')}" if errors else "this test cell failed"
            row["failed"].append({"name": tested_name(test_id), "test": test_id, "hidden": False,
                                  "message": shorten(message)})
    for row in rows.values():
        row["score"] = round(row["score"], 2)
    return list(rows.values())


def shorten(message):
    """A failing check's message, at most MESSAGE_LENGTH characters, keeping its end (what came back)."""
    return elide(message, MESSAGE_LENGTH)


def summary_text(rows):
    """The summary as plain text, for a terminal."""
    lines = []
    for row in rows:
        lines.append(f"{row['exercise']}  {row['score']:g} / {row['max_score']:g}")
        lines += [f"    {failed['name']}: {failed['message']}" for failed in row["failed"]]
    return "\n".join(lines)


def summary_html(rows):
    """The summary as an HTML table, for the top of the feedback."""
    total, maximum = sum(r["score"] for r in rows), sum(r["max_score"] for r in rows)
    out = ['<div id="posenc-summary" class="panel panel-info">',
           f'<div class="panel-heading"><h4>Summary: {total:g} of {maximum:g} points</h4>'
           "<p>Each exercise's points; under an exercise that lost points, each check that failed, "
           "with what it tried, what it expected and what came back. Fix the first one first: "
           "later checks often fail because of it.</p></div>",
           '<table class="table table-condensed"><thead><tr><th>exercise</th><th class="center">points</th>'
           "<th>failed checks</th></tr></thead><tbody>"]
    for row in rows:
        lost = row["score"] < row["max_score"]
        out.append(f'<tr class="{"warning" if lost else ""}"><td><b>{row["exercise"]}</b></td>'
                   f'<td class="center">{row["score"]:g} / {row["max_score"]:g}</td>'
                   f'<td>{len(row["failed"]) or ""}</td></tr>')
        if row["failed"]:
            items = "".join(f"<li><code>{html.escape(f['name'])}</code>"
                            f"{' (hidden test)' if f['hidden'] else ''}: {html.escape(f['message'])}</li>"
                            for f in row["failed"])
            out.append(f'<tr><td></td><td colspan="2"><ul class="posenc-failed">{items}</ul></td></tr>')
    out.append("</tbody></table></div>")
    return "\n".join(out)


def unreadable_html(reason, rows):
    """The top of the feedback of a file that could not be read: that fact, why and what to do, once
    (no list of unanswered checks: nothing of the student's was graded)."""
    from .grading import UNREADABLE_WHAT_TO_DO

    maximum = sum(r["max_score"] for r in rows)
    return ('<div id="posenc-summary" class="panel panel-danger">'
            f'<div class="panel-heading"><h4>Your submission could not be graded as sent: 0 of {maximum:g} points</h4>'
            f"<p>{html.escape(reason)}</p><p><b>{html.escape(UNREADABLE_WHAT_TO_DO)}</b></p>"
            "<p>Below is the blank assignment it was graded as.</p></div></div>")


def hide_hidden_tests(cell):
    """Replace the hidden tests of a test cell by how many of their checks passed, and the failed ones' messages."""
    lines = cell.source.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip().startswith(HIDDEN_BEGIN)]
    if not starts:
        return
    hidden = [check for check in checks_of(cell) if check["hidden"]]
    passed = sum(1 for check in hidden if check["passed"])
    kept = lines[:starts[0]]
    ends = [i for i, line in enumerate(lines) if line.strip().startswith(HIDDEN_END)]
    after = lines[ends[-1] + 1:] if ends and ends[-1] > starts[0] else []
    note = [f"# hidden tests: {len(hidden)} checks, {passed} passed"]
    note += [f"#   FAILED: {shorten(check['message'])}" for check in hidden if not check["passed"]]
    cell.source = "\n".join(kept + note + after)
    for check in hidden:
        check["text"] = ""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":  # a traceback quotes the test's lines
            output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]


class FeedbackSummary(Preprocessor):
    """Put the summary in the feedback's resources, and hide the hidden tests (unless told not to)."""

    show_hidden_tests = Bool(False, help=(
        "Show the full test cells, hidden tests included, in the feedback (nbgrader's own behaviour). "
        "Off: each test cell shows its visible part and, in place of its hidden tests, how many of their "
        "checks passed and the messages of those that failed, so feedback can go out before the "
        "deadline.")).tag(config=True)
    enabled = Bool(True)

    def preprocess(self, nb, resources):
        rows, reason = summary(nb), unreadable_reason(nb)
        resources.setdefault("posenc", {})["summary_html"] = unreadable_html(reason, rows) if reason else summary_html(rows)
        if reason:  # said once, at the top
            nb.cells = nb.cells[1:]
        if not self.show_hidden_tests:
            for cell in nb.cells:
                if is_test_cell(cell):
                    hide_hidden_tests(cell)
        return nb, resources


class SummaryFirstHTMLExporter(HTMLExporter):
    """nbgrader's feedback page with the course's summary first (``templates/posenc_feedback``).

    ``GenerateFeedback.exporter_class`` in ``nbgrader_config.py``: a class of its own, so that the
    template applies to the feedback and not to formgrader's pages, which also export HTML.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # set after the configuration, which names nbgrader's own template for every HTMLExporter
        self.extra_template_basedirs = [
            str(Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"),
            str(Path(__file__).parent / "templates")]
        self.template_name = "posenc_feedback"
        self.template_file = "summary_first.html.j2"
        self.template_paths = self._template_paths()  # its default was found with the old names
