"""posenc-check: grade your own copy of exercises.ipynb with the full hidden tests.

It runs nbgrader's real autograde in a private, temporary course built from this
repository's source notebooks, so the score is the one an instructor's grading gives. It grades
either graded assignment (``posenc`` or ``posenc-advanced``): the notebook's cells say which.

    posenc-check exercises.ipynb           # each exercise's points and failed checks, then the total
    posenc-check exercises.ipynb --json    # {"score": S, "max_score": M, "exercises": {exNN: {
                                           #   "score", "max_score", "checks": [{"test", "line",
                                           #   "hidden", "passed", "message"}]}}}

Exit codes: 0 at full marks, 1 below full marks, 2 if the file cannot be graded.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from .course import load_config, nbgrader_api, nbgrader_env, new_course
from .feedback import checks_by_exercise, shorten, tested_name
from .layout import GRADED, NOTEBOOK, grade_id, source_notebook

LEARNER = "learner"


class CannotGrade(Exception):
    """The file is missing, is not a notebook, or is not the notebook of a graded assignment."""


def progress(message):
    print(f"posenc-check: {message}", file=sys.stderr, flush=True)


def assignment_of(notebook):
    """The graded assignment `notebook` belongs to: the one that shares most of its cells' grade ids
    (a student may delete or add cells, so not all need match); None if it shares none."""
    found = {grade_id(cell) for cell in notebook.cells if grade_id(cell)}
    shared = {assignment: len(found & {grade_id(cell) for cell in nbformat.read(
        str(source_notebook(assignment)), as_version=4).cells if grade_id(cell)}) for assignment in GRADED}
    best = max(shared, key=shared.get)
    return best if shared[best] else None


def read_learner_notebook(path):
    """Read and sanity-check the learner's notebook; return it and its assignment, or raise
    CannotGrade with a clear reason."""
    path = Path(path)
    if not path.exists():
        raise CannotGrade(f"{path}: no such file")
    if not path.is_file():
        raise CannotGrade(f"{path}: not a file")
    try:
        notebook = nbformat.read(str(path), as_version=4)
    except Exception as error:  # nbformat raises several kinds for a broken file
        raise CannotGrade(f"{path}: not a Jupyter notebook ({type(error).__name__}: {str(error)[:200]})") from None
    assignment = assignment_of(notebook)
    if assignment is None:
        starts = " or ".join(f"release/{a}/{NOTEBOOK}" for a in GRADED)
        raise CannotGrade(f"{path}: not the exercises notebook of a posenc assignment (none of its cells "
                          f"belongs to one; start from {starts})")
    return notebook, assignment


def grade(notebook_path, workdir):
    """Autograde `notebook_path` in a course under `workdir`; return (scores, failures)."""
    learner, assignment = read_learner_notebook(notebook_path)
    progress(f"{Path(notebook_path).name} is the notebook of the assignment {assignment}")
    course = new_course(Path(workdir) / "course")
    submission = course / "submitted" / LEARNER / assignment / NOTEBOOK
    submission.parent.mkdir(parents=True)
    nbformat.write(learner, str(submission))

    from .kernel import sandbox_problem

    problem = sandbox_problem()
    if problem:  # macOS, or Linux without bubblewrap: fine for grading one's own notebook
        progress(f"{problem}: your notebook runs without it, which is fine for your own code")
    progress("loading nbgrader (a few seconds)")
    os.environ["PATH"] = nbgrader_env()["PATH"]  # nbgrader runs `alembic`: the one beside this Python
    config = load_config(course)
    config.ResilientExecute.sandbox = "if-available"  # the learner's own code: sandboxed where Linux can
    api = nbgrader_api(config)
    progress("preparing the assignment with its hidden tests")
    result = api.generate_assignment(assignment)
    if not result["success"]:
        raise RuntimeError("nbgrader generate_assignment failed:\n" + result.get("error", result.get("log", "")))
    progress("running your notebook with the full tests (nbgrader autograde)")
    result = api.autograde(assignment, LEARNER)
    autograded = course / "autograded" / LEARNER / assignment / NOTEBOOK
    if not result["success"] or not autograded.exists():
        raise CannotGrade("nbgrader could not grade this notebook:\n" + result.get("log", "")[-2000:])
    from .report import exercise_scores

    scores = exercise_scores(course / "gradebook.db", assignment)[LEARNER]
    return scores, checks_by_exercise(autograded, full=False)  # as a student reads them before the due date


def format_result(scores, checks):
    """The table a learner reads: each exercise's points and, under one that lost points, its failed
    checks with their messages, as the feedback's summary shows them."""
    lines = [f"{'exercise':<9} {'points':>9}  failed checks", "-" * 72]
    for exercise, (score, max_score) in scores.items():
        failed = [c for c in checks.get(exercise, []) if not c["passed"]]
        lines.append(f"{exercise:<9} {score:>4g}/{max_score:<4g}  {len(failed) or ''}".rstrip())
        for check in failed:
            where = "hidden test" if check["hidden"] else f"line {check['line']}"
            lines.append(f"    {tested_name(check['test'])} ({where}): {shorten(check['message'])}")
    total, maximum = sum(s for s, _ in scores.values()), sum(m for _, m in scores.values())
    lines += ["-" * 72, f"{'total':<9} {total:>4g}/{maximum:g}"]
    return "\n".join(lines)


def _number(points):
    return int(points) if float(points).is_integer() else points


def as_json(scores, checks):
    return json.dumps({
        "score": _number(round(sum(s for s, _ in scores.values()), 2)),
        "max_score": _number(sum(m for _, m in scores.values())),
        "exercises": {ex: {"score": _number(s), "max_score": _number(m), "checks": checks.get(ex, [])}
                      for ex, (s, m) in scores.items()},
    })


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="posenc-check", description="Grade your exercises.ipynb with the full hidden tests of the posenc course "
                                          "(either assignment, posenc or posenc-advanced: its cells say which).")
    parser.add_argument("notebook", help="your copy of exercises.ipynb")
    parser.add_argument("--json", action="store_true", help="print only the scores, as JSON, on stdout")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="posenc-check-") as workdir:
            scores, checks = grade(args.notebook, workdir)
    except CannotGrade as error:
        print(f"posenc-check: cannot grade {error}", file=sys.stderr)
        return 2
    progress(f"graded in {time.perf_counter() - started:.1f} s")
    print(as_json(scores, checks) if args.json else format_result(scores, checks))
    full = all(score >= max_score for score, max_score in scores.values())
    return 0 if full else 1


if __name__ == "__main__":
    sys.exit(main())
