"""What a student learns from a graded notebook: one row per exercise, each failed check's message, hidden tests hidden.

The feedback page (:mod:`hardened_grading.preprocessors.feedback_summary`), a course's own checker and the
class report read graded notebooks through these functions.
"""

import html
import re

import nbformat
from nbconvert.filters import strip_ansi

from .cells import engine_meta, grade_id, is_test_cell, nbgrader_meta
from .judge.checks import HIDDEN_BEGIN, HIDDEN_END
from .judge.messages import counted, elide, repeated_together

MESSAGE_LENGTH = 300  #: a failing check's message is cut to this many characters

WHAT_LENGTH = 160  #: what a hidden check tried, as shown before the due date, is cut to this many characters

HIDDEN_MESSAGES = ("auto", "before-due", "after-due")  #: the values of FeedbackSummary.hidden_messages

#: what follows what a hidden check tried, in place of the rest of its message, before the due date
WITHHELD = "wrong (a hidden check: what it expected is not shown before the due date)"

# Messages about the submission's own state, which give nothing away: kept whole at any time.
_OWN_STATE = re.compile(r"^not run\b|not answered yet|not implemented yet|^[A-Z]\w*(Error|Exception|Exit|Interrupt)\b[^:]*: ")


def checks_of(cell):
    """The checks the judge recorded for a graded test cell (dicts of :class:`hardened_grading.judge.checks.Check`)."""
    return engine_meta(cell).get("checks", [])


def what_was_tried(message):
    """The start of a check's `message` that says what it tried: the text before its first ``": "``
    outside brackets (``apply_rope(x of shape (2, 4), positions [3, 5])``, ``ex02_name = 1000``), or None
    when it has none."""
    depth = 0
    for index, char in enumerate(message):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == ":" and depth == 0 and message[index + 1:index + 2] in (" ", ""):
            return message[:index].strip() or None
    return None


def check_message(check, full=False, part_of=None):
    """The message of a failed `check` as a student may read it, on one line.

    Parameters
    ----------
    check : dict
        A check as the judge records it (:func:`checks_of`): ``hidden`` and ``message`` are used,
        and ``test``, the test cell's grade id, when the message has no start that says what it tried.
    full : bool
        After the due date (``FeedbackSummary.hidden_messages``): the full message. Before it, which is
        also what a course's own checker may show a learner, a hidden check's message keeps only what it tried and says that
        it was wrong, with no expected value and no got-versus-expected detail.

    Returns
    -------
    str
        A visible check's message, or any check's when `full`, shortened to MESSAGE_LENGTH characters.
        Messages about the submission's own state are kept whole: "not answered yet", "not implemented
        yet", "not run ..." and an error the submission's code raised (``TypeError: ...``).
    """
    message = " ".join(str(check.get("message", "")).split())
    if full or not check.get("hidden") or _OWN_STATE.search(message):
        return shorten(message)
    what = what_was_tried(message) or tested_name(check.get("test", ""), part_of) or "a hidden check"
    return f"{elide(what, WHAT_LENGTH)}: {WITHHELD}"


def each_test_cell(test_id):
    """The default part a test cell belongs to in the summary: itself (its grade id)."""
    return test_id


def part_by_pattern(pattern):
    """``part_of(test_id)``: the first group of `pattern` (a regular expression) in a test cell's grade id, or
    the whole grade id when it does not match; :func:`each_test_cell` for an empty pattern."""
    if not pattern:
        return each_test_cell
    compiled = re.compile(pattern)

    def part_of(test_id):
        found = compiled.search(test_id or "")
        return found.group(1) if found and found.groups() else test_id
    return part_of


def checks_by_exercise(autograded_path, full=True, part_of=each_test_cell):
    """``{part: [check, ...]}`` of a graded notebook: every check of its test cells, in order, each a
    dict with the test cell, its line, whether it is hidden, whether it passed, and its message: the
    whole message when `full` (the instructor's view), else as a student reads it before the due date
    (:func:`check_message`). ``part_of(grade id)`` groups the test cells (one part each by default)."""
    notebook = nbformat.read(str(autograded_path), as_version=4)
    found = {}
    for cell in notebook.cells:
        if is_test_cell(cell):
            for check in checks_of(cell):
                shown = {"test": grade_id(cell), "line": check["line"], "hidden": check["hidden"],
                         "passed": bool(check["passed"]), "message": check["message"]}
                if not full and not shown["passed"]:
                    shown["message"] = check_message(shown, part_of=part_of)
                found.setdefault(part_of(grade_id(cell)), []).append(shown)
    return found


def tested_name(test_id, part_of=None):
    """What a test cell tests: its grade id without its part (``part_of(test_id)``, see :func:`part_by_pattern`)
    and without a ``_test`` suffix: ``ex05_apply_rope_test`` -> ``apply_rope`` when its part is ``ex05``;
    ``correct_squares`` -> ``correct_squares`` when each test cell is a part of its own (the default)."""
    name, part = test_id.removesuffix("_test"), (part_of or each_test_cell)(test_id)
    return name[len(part) + 1:] if part != test_id and name.startswith(f"{part}_") else name


def summary(notebook, full=False, part_of=each_test_cell):
    """``[{exercise, score, max_score, failed: [{name, test, hidden, message, count}]}]``, in order: one row per
    part (``part_of(grade id)`` of its test cells; one per test cell by default). Failed checks that say the
    same in a row are one, with how many they are (``count``, :func:`repeated_together`).

    Scores are the cells' ``nbgrader.score`` where nbgrader put it (the gradebook's, in feedback), else the
    judge's own score in ``hardened_grading.score``. The messages are as :func:`check_message` shows them: whole
    when `full` (after the due date), else without a hidden check's expected value.
    """
    rows = {}
    for cell in notebook.cells:
        if not is_test_cell(cell):
            continue
        meta, test_id = nbgrader_meta(cell), grade_id(cell)
        row = rows.setdefault(part_of(test_id), {"exercise": part_of(test_id), "score": 0.0,
                                                     "max_score": 0.0, "failed": []})
        points = float(meta.get("points", 0))
        judged = engine_meta(cell)
        score = meta.get("score", judged.get("score", points))
        row["score"] += float(score if score is not None else 0)
        row["max_score"] += points
        for check in checks_of(cell):
            if not check["passed"]:
                row["failed"].append({"name": tested_name(test_id, part_of), "test": test_id, "hidden": check["hidden"],
                                      "message": check_message({**check, "test": test_id}, full, part_of)})
        if not checks_of(cell) and float(score or 0) < points:
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            message = f"{errors[0].get('ename')}: {errors[0].get('evalue')}" if errors else "this test cell failed"
            if errors and errors[0].get("ename") == "AssertionError":
                message = str(errors[0].get("evalue")) or failed_assert(errors[0])  # as the judge records a check's failure
            # with no checks recorded, an error may be a hidden test's: judged as one
            hidden = HIDDEN_BEGIN in cell.get("source", "")
            row["failed"].append({"name": tested_name(test_id, part_of), "test": test_id, "hidden": hidden,
                                  "message": check_message({"hidden": hidden, "message": message, "test": test_id},
                                                           full, part_of)})
    for row in rows.values():
        row["score"] = round(row["score"], 2)
        row["failed"] = [{**group[0], "count": len(group)} for group in repeated_together(row["failed"])]
    return list(rows.values())


def failed_assert(error):
    """What a bare ``assert`` (no message) that failed tried: ``failed: assert f(1) == 1``, its line in the error's
    traceback (IPython's arrow line, else a plain traceback's last ``assert`` line); "an assert failed" when the
    traceback does not show it."""
    lines = [text for line in error.get("traceback") or [] for text in strip_ansi(str(line)).splitlines()]
    arrowed = [re.sub(r"^\s*-+>\s*\d*\s*", "", text).strip() for text in lines if re.match(r"^\s*-+>", text)]
    plain = [text.strip() for text in lines]
    for code in [*reversed(arrowed), *reversed(plain)]:
        if code.startswith("assert "):
            return f"failed: {code}"
    return "an assert failed"


def checks_said(count, hidden):
    """How a summary's line names the checks it stands for: ``" (hidden test)"`` for one hidden check, ``""`` for
    one visible check, ``" (16 hidden checks)"``, ``" (3 checks)"`` for several."""
    if count == 1:
        return " (hidden test)" if hidden else ""
    return f" ({counted(count, 'hidden check' if hidden else 'check')})"


def shorten(message):
    """A failing check's message, at most MESSAGE_LENGTH characters, keeping its end (what came back)."""
    return elide(message, MESSAGE_LENGTH)


def summary_text(rows):
    """The summary as plain text, for a terminal."""
    lines = []
    for row in rows:
        lines.append(f"{row['exercise']}  {row['score']:g} / {row['max_score']:g}")
        lines += [f"    {failed['name']}{_several(failed)}: {failed['message']}" for failed in row["failed"]]
    return "\n".join(lines)


def _several(failed):
    """What a plain-text line of the summary adds to say how many checks it stands for (none for one)."""
    return checks_said(failed["count"], failed["hidden"]) if failed.get("count", 1) > 1 else ""


def summary_html(rows, full=False, by_hand=0, part="test"):
    """The summary as an HTML table, for the top of the feedback; `full` as in :func:`summary`; `by_hand`: the
    notebook's points that are graded by hand (answers and tasks), said apart; `part`: what a row is called."""
    total, maximum = sum(r["score"] for r in rows), sum(r["max_score"] for r in rows)
    told = ("with what it tried, what it expected and what came back" if full else
            "with what it tried (a hidden check says what it expected after the due date)")
    out = ['<div id="grading-summary" class="panel panel-info">',
           f'<div class="panel-heading"><h4>Summary: {total:g} of {maximum:g} points</h4>'
           + (f"<p>This notebook's other {by_hand:g} points are graded by hand.</p>" if by_hand else "")
           + f"<p>The points of each {html.escape(part)}, and under those that lost points each check that failed, "
           f"{told}. Fix the first one first: later checks often fail because of it.</p></div>",
           f'<table class="table table-condensed"><thead><tr><th>{html.escape(part)}</th><th class="center">points</th>'
           "<th>failed checks</th></tr></thead><tbody>"]
    for row in rows:
        lost = row["score"] < row["max_score"]
        out.append(f'<tr class="{"warning" if lost else ""}"><td><b>{html.escape(str(row["exercise"]))}</b></td>'
                   f'<td class="center">{row["score"]:g} / {row["max_score"]:g}</td>'
                   f'<td>{sum(f.get("count", 1) for f in row["failed"]) or ""}</td></tr>')
        if row["failed"]:
            items = "".join(f"<li><code>{html.escape(f['name'])}</code>"
                            f"{checks_said(f.get('count', 1), f['hidden'])}: {html.escape(f['message'])}</li>"
                            for f in row["failed"])
            out.append(f'<tr><td></td><td colspan="2"><ul class="grading-failed">{items}</ul></td></tr>')
    out.append("</tbody></table></div>")
    return "\n".join(out)


def unreadable_html(reason, rows):
    """The top of the feedback of a file that could not be read: that fact, why and what to do, once
    (no list of unanswered checks: nothing of the student's was graded)."""
    from .exporters.notebook import UNREADABLE_WHAT_TO_DO

    maximum = sum(r["max_score"] for r in rows)
    return ('<div id="grading-summary" class="panel panel-danger">'
            f'<div class="panel-heading"><h4>Your submission could not be graded as sent: 0 of {maximum:g} points</h4>'
            f"<p>{html.escape(reason)}</p><p><b>{html.escape(UNREADABLE_WHAT_TO_DO)}</b></p>"
            "<p>Below is the blank assignment it was graded as.</p></div></div>")


def _error_line(output):
    """The one line the judge records for the error `output` of a test cell (:func:`hardened_grading.judge._one_line`)."""
    if output.get("ename") == "AssertionError":
        return elide(output.get("evalue", ""), 400) or "the check failed"
    return elide(f"{output.get('ename')}: {output.get('evalue')}", 400)


FAILED_HIDDEN = "  FAILED (hidden check): "  #: how the grader lists a failed hidden check under its test cell
#: how it lists one or several failed hidden checks with the same message (:func:`repeated_together`)
_FAILED_HIDDEN = re.compile(r"^  FAILED \((?:hidden check|\d+ hidden checks)\): ")


def _redacted_line(line, test_id, part_of=None):
    """A line of the grader's list of failed checks under a test cell, a hidden check's as
    :func:`check_message` shows it before the due date."""
    start = _FAILED_HIDDEN.match(line)
    if not start:
        return line
    message = line[start.end():].rstrip("\n")
    return start.group() + check_message({"hidden": True, "message": message, "test": test_id}, part_of=part_of) \
        + line[len(line.rstrip("\n")):]


def _how_many(count):
    """What a line of the hidden-tests note adds to say how many failed checks it stands for (none for one)."""
    return f" ({counted(count, 'check')})" if count > 1 else ""


def hide_hidden_tests(cell, full=False, part_of=None):
    """Replace the hidden tests of a test cell by how many of their checks passed, and the failed ones'
    messages (:func:`check_message`, `full` after the due date). The cell's error, when a hidden check
    raised it, is shown as that check's message is."""
    lines = cell.source.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip().startswith(HIDDEN_BEGIN)]
    if not starts:
        return
    hidden = [check for check in checks_of(cell) if check["hidden"]]
    passed = sum(1 for check in hidden if check["passed"])
    kept = lines[:starts[0]]
    ends = [i for i, line in enumerate(lines) if line.strip().startswith(HIDDEN_END)]
    after = lines[ends[-1] + 1:] if ends and ends[-1] > starts[0] else []
    note = [f"# hidden tests: {counted(len(hidden), 'check')}, {passed} passed"]
    test_id = grade_id(cell)
    shown = [{"test": test_id, "hidden": True, "message": check_message({**check, "test": test_id}, full, part_of)}
             for check in hidden if not check["passed"]]
    note += [f"#   FAILED{_how_many(len(group))}: {group[0]['message']}" for group in repeated_together(shown)]
    cell.source = "\n".join(kept + note + after)
    failed_hidden = [check for check in hidden if not check["passed"]]
    for check in hidden:
        check["text"] = ""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and not full:  # the grader's list of failed checks
            output["text"] = "".join(_redacted_line(line, test_id, part_of)
                                     for line in str(output.get("text", "")).splitlines(True))
        if output.get("output_type") == "error":  # a traceback quotes the test's lines
            raised = [check for check in failed_hidden if check["message"] == _error_line(output)]
            if raised and not full:
                output["ename"], output["evalue"] = "AssertionError", check_message({**raised[0], "test": test_id},
                                                                                     part_of=part_of)
            output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]
