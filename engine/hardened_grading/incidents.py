"""What went wrong with a graded notebook as a whole, read from the notebook itself.

The grader writes into a graded notebook's cells when it stops one (:mod:`hardened_grading.preprocessors.execute`,
:mod:`hardened_grading.judge.link`, and nbgrader's ``Execute.error_on_timeout``); ``hardened-grade``
reports these at the end of a run, and a course's own reports may too.
"""

import re

from .cells import engine_meta, grade_id, is_test_cell, unreadable_reason
from .judge.messages import elide

#: The errors the grader writes into a graded notebook's cells when it stops one: their ``ename`` -> what
#: happened, in words.
STOPPED = {
    "CellTimeoutError": "timed out",
    "CPUTimeLimitExceeded": "timed out (CPU time)",
    "KernelDied": "crashed the kernel",
    "MemoryError": "ran out of memory",
    "GradingTimeBudget": "not run: the submission's time was spent (submission_seconds)",
    "OutputLost": "lost its outputs (a message larger than the grader takes)",
}
#: A test cell's check that an abort stopped says ``not run: WHY`` (hardened_grading.judge).
NOT_RUN_ABORTED = "not run: "


def _why(error):
    """The grader's message in an error output; for nbgrader's own timeout error, which has none, what it means."""
    why = " ".join(str(error.get("evalue", "")).split())
    if not why:
        last = re.sub(r"\x1b\[[0-9;]*m", "", (error.get("traceback") or [""])[-1]).strip()
        why = last.removeprefix(f"{error.get('ename')}: ")
        if error.get("ename") == "CellTimeoutError":
            why = f"the cell ran over the time limit (Execute.timeout) and was interrupted ({why or 'no reply'})"
    return elide(why, 300)


def incidents(notebook, part_of=None):
    """``[(what, where, why)]``, in order: `what` is "unreadable" (the file could not be read and was
    graded as the blank release) or one of :data:`STOPPED`'s values; `where` is the cell (its grade id,
    then ``part_of(grade id)`` in brackets when given, else its number); `why` is the grader's own message."""
    found = []
    reason = unreadable_reason(notebook)
    if reason:
        found.append(("unreadable", "the whole file: graded as the blank release, 0 points", reason))
    for number, cell in enumerate(notebook.cells, 1):
        if cell.cell_type != "code":
            continue
        name = grade_id(cell)
        if name:
            where = f"cell {name} ({part_of(name)})" if part_of else f"cell {name}"
        else:
            where = f"cell {number} (a cell of the student's own)"
        stopped = [o for o in cell.get("outputs", []) if o.get("output_type") == "error" and o.get("ename") in STOPPED]
        for output in stopped[:1]:
            found.append((STOPPED[output["ename"]], where, _why(output)))
        if not stopped and is_test_cell(cell):  # tests stopped after some checks had passed: said by the checks
            aborted = [c["message"] for c in engine_meta(cell).get("checks", [])
                       if not c.get("passed") and str(c.get("message", "")).startswith(NOT_RUN_ABORTED)]
            if aborted:
                why = aborted[0].removeprefix(NOT_RUN_ABORTED)
                what = ("timed out" if "took over" in why or "time" in why else
                        "ran out of memory" if "memory" in why else
                        "crashed the kernel" if "died" in why else "stopped")
                found.append((what, where, elide(why, 300)))
    return found
