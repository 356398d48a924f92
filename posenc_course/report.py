"""Per-student, per-exercise scores from an nbgrader gradebook.

    python -m posenc_course.report [gradebook.db]
"""

import argparse
import re
from collections import defaultdict

from nbgrader.api import Gradebook, MissingEntry

from .layout import ASSIGNMENT, NOTEBOOK_ID, exercise_of, grade_id, is_test_cell, unreadable_reason

#: The errors the grader writes into a graded notebook's cells when it stops one (posenc_course.grading and
#: kernel_link, and nbgrader's Execute.error_on_timeout): their ``ename`` -> what happened, in words.
STOPPED = {
    "CellTimeoutError": "timed out",
    "CPUTimeLimitExceeded": "timed out (CPU time)",
    "KernelDied": "crashed the kernel",
    "MemoryError": "ran out of memory",
}
#: A test cell's check that an abort stopped says ``not run: WHY`` (posenc_course.judge).
NOT_RUN_ABORTED = "not run: "


def _why(error):
    """The grader's message in an error output; for nbgrader's own timeout error, which has none, what it means."""
    why = " ".join(str(error.get("evalue", "")).split())
    if not why:
        last = re.sub(r"\x1b\[[0-9;]*m", "", (error.get("traceback") or [""])[-1]).strip()
        why = last.removeprefix(f"{error.get('ename')}: ")
        if error.get("ename") == "CellTimeoutError":
            why = f"the cell ran over the time limit (Execute.timeout) and was interrupted ({why or 'no reply'})"
    return why[:300]


def incidents(notebook):
    """What went wrong with a graded notebook as a whole, read from the notebook itself: ``[(what, where,
    why)]``, in order. `what` is "unreadable" (the file could not be read and was graded as the blank
    release) or one of :data:`STOPPED`'s values; `where` is the cell (its grade id, else its number) and
    the exercise; `why` is the grader's own message."""
    found = []
    reason = unreadable_reason(notebook)
    if reason:
        found.append(("unreadable", "the whole file: graded as the blank release, 0 points", reason))
    for number, cell in enumerate(notebook.cells, 1):
        if cell.cell_type != "code":
            continue
        name = grade_id(cell)
        where = f"cell {name} ({exercise_of(name)})" if name else f"cell {number} (a cell of the student's own)"
        stopped = [o for o in cell.get("outputs", []) if o.get("output_type") == "error" and o.get("ename") in STOPPED]
        for output in stopped[:1]:
            found.append((STOPPED[output["ename"]], where, _why(output)))
        if not stopped and is_test_cell(cell):  # tests stopped after some checks had passed: said by the checks
            aborted = [c["message"] for c in cell.get("metadata", {}).get("posenc", {}).get("checks", [])
                       if not c.get("passed") and str(c.get("message", "")).startswith(NOT_RUN_ABORTED)]
            if aborted:
                why = aborted[0].removeprefix(NOT_RUN_ABORTED)
                what = ("timed out" if "took over" in why or "time" in why else
                        "ran out of memory" if "memory" in why else
                        "crashed the kernel" if "died" in why else "stopped")
                found.append((what, where, why[:300]))
    return found


def exercise_scores(gradebook, assignment=ASSIGNMENT, notebook=NOTEBOOK_ID):
    """``{student: {exercise: (score, max_score)}}`` for every graded submission in `gradebook`: the
    path of a SQLite file, or a database URL (``postgresql://...``).

    Students without a submitted notebook are left out.
    """
    scores = {}
    url = str(gradebook) if "://" in str(gradebook) else f"sqlite:///{gradebook}"
    with Gradebook(url) as gradebook:
        for student in gradebook.students:
            try:
                submitted = gradebook.find_submission_notebook(notebook, assignment, student.id)
            except MissingEntry:
                continue
            per_exercise = defaultdict(lambda: [0.0, 0.0])
            for grade in submitted.grades:
                per_exercise[exercise_of(grade.name)][0] += grade.score
                per_exercise[exercise_of(grade.name)][1] += grade.max_score
            # to 2 decimals, as partial credit is given: 2.7 + 3 + 2 is 7.7, not 7.700000000000001
            scores[student.id] = {ex: (round(score, 2), maximum) for ex, (score, maximum) in sorted(per_exercise.items())}
    return scores


def format_table(scores):
    """A plain-text table: one row per student, one column per exercise, then the total."""
    if not scores:
        return "(no graded submissions)"
    exercises = sorted({ex for row in scores.values() for ex in row})
    maxima = {ex: max(row[ex][1] for row in scores.values() if ex in row) for ex in exercises}
    width = max(len("student"), *(len(s) for s in scores))
    header = f"{'student':<{width}} " + " ".join(f"{ex:>5}" for ex in exercises) + "   total"
    lines = [header, f"{'(max)':<{width}} " + " ".join(f"{maxima[ex]:>5g}" for ex in exercises)
             + f"   {sum(maxima.values()):g}", "-" * len(header)]
    for student, row in sorted(scores.items()):
        cells = " ".join(f"{row[ex][0]:>5g}" if ex in row else f"{'-':>5}" for ex in exercises)
        total = sum(score for score, _ in row.values())
        lines.append(f"{student:<{width}} {cells}   {total:g}/{sum(m for _, m in row.values()):g}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gradebook", nargs="?", default="gradebook.db")
    args = parser.parse_args(argv)
    print(format_table(exercise_scores(args.gradebook)))


if __name__ == "__main__":
    main()
