"""posenc-check: grade your own copy of exercises.ipynb with the full hidden tests.

It runs nbgrader's real autograde in a private, temporary course built from this
repository's source notebooks, so the score is the one an instructor's grading gives. It grades
every graded assignment (``posenc``, ``posenc-advanced``, ``posenc-current``): the notebook's cells say which.

    posenc-check exercises.ipynb           # one line per exercise (points, or "not started"), at most
                                           # 3 failed checks under one that lost points, the total
    posenc-check exercises.ipynb --exercise ex03   # that exercise only, every failed check
    posenc-check exercises.ipynb -v        # every failed check of every exercise
    posenc-check exercises.ipynb --json    # {"score": S, "max_score": M, "exercises": {exNN: {
                                           #   "score", "max_score", "started", "checks": [{"test",
                                           #   "line", "hidden", "passed", "message"}]}}}

An exercise is *not started* when it has no points and each of its answer cells still holds the
release's stub (the same code, up to blank space at its ends): nothing of the learner's was graded.

Exit codes: 0 at full marks (of the one exercise, with --exercise), 1 below, 2 if the file cannot be
graded or the exercise does not exist.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from ..course import load_config, nbgrader_api, nbgrader_env, new_course
from hardened_grading.judge.messages import elide, repeated_together
from hardened_grading.summary import checks_by_exercise, shorten, tested_name
from hardened_grading.untrusted.terminal import escape
from ..layout import GRADED, NOTEBOOK, exercise_of, grade_id, is_answer_cell, release_notebook, source_notebook

LEARNER = "learner"
SHOWN_FAILURES = 3  #: failed checks listed under an exercise, without -v or --exercise


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
        raise CannotGrade(f"{path}: not a Jupyter notebook ({type(error).__name__}: {elide(error, 200)})") from None
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

    from hardened_grading.sandbox.probe import sandbox_problem

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
    from ..report import exercise_scores

    scores = exercise_scores(course / "gradebook.db", assignment)[LEARNER]
    return scores, checks_by_exercise(autograded, full=False, part_of=exercise_of)  # as a student reads them before the due date


def failed_check_text(check, where=None):
    """The one line that tells a learner of one failed check: what it tests, where (`where`, else its
    line or "hidden test"), and its message."""
    where = where or ("hidden test" if check["hidden"] else f"line {check['line']}")
    return f"{tested_name(check['test'], exercise_of)} ({where}): {shorten(check['message'])}"


def failure_lines(failed):
    """The lines of `failed` checks, in order, one line for consecutive checks of one test cell that
    failed with the same message (often "not run, because an earlier step failed"), as the feedback's
    summary says them (:func:`hardened_grading.judge.messages.repeated_together`)."""
    lines = []
    for group in repeated_together(failed):
        if len(group) == 1:
            lines.append(failed_check_text(group[0]))
        elif group[0]["hidden"]:
            lines.append(failed_check_text(group[0], f"{len(group)} hidden checks"))
        else:
            lines.append(failed_check_text(group[0], "lines " + ", ".join(str(c["line"]) for c in group)))
    return lines


def untouched_exercises(notebook, assignment):
    """The exercises none of whose answer cells the learner changed: each answer cell of the exercise
    that is in `notebook` holds the release's stub, up to blank space at its ends."""
    release = nbformat.read(str(release_notebook(assignment)), as_version=4)
    stubs = {grade_id(cell): cell.source.strip() for cell in release.cells if is_answer_cell(cell)}
    changed = {exercise_of(grade_id(cell)) for cell in notebook.cells
               if is_answer_cell(cell) and cell.source.strip() != stubs.get(grade_id(cell))}
    return {exercise_of(name) for name in stubs} - changed


def not_started(scores, untouched):
    """The exercises that are not started: no points, and answer cells as released."""
    return {ex for ex, (score, _) in scores.items() if score == 0 and ex in untouched}


def format_result(scores, checks, untouched=frozenset(), shown=SHOWN_FAILURES, notebook="exercises.ipynb",
                  verbose=False):
    """The table a learner reads: one line per exercise with its points ("not started" for one without
    points whose answers are the release's stubs) and, under a started exercise that lost points, its
    failed checks, at most `shown` lines of them (None: all; :func:`failure_lines`), and how many
    more; then the total and which exercise to work on next. `verbose`: the failed checks of
    exercises not started too."""
    idle = not_started(scores, untouched)
    lines = [f"{'exercise':<9} {'points':>9}", "-" * 72]
    for exercise, (score, max_score) in scores.items():
        failed = [c for c in checks.get(exercise, []) if not c["passed"]]
        note = "not started" if exercise in idle else f"{len(failed)} failed check{'' if len(failed) == 1 else 's'}" if failed else ""
        lines.append(f"{exercise:<9} {score:>4g}/{max_score:<4g}  {note}".rstrip())
        if exercise in idle and not verbose:
            continue
        texts = failure_lines(failed)
        listed = texts if shown is None else texts[:shown]
        lines += [f"    {text}" for text in listed]
        if len(texts) > len(listed):
            lines.append(f"    ... and {len(texts) - len(listed)} more "
                         f"(posenc-check {notebook} --exercise {exercise} shows them all)")
    total, maximum = sum(s for s, _ in scores.values()), sum(m for _, m in scores.values())
    lines += ["-" * 72, f"{'total':<9} {round(total, 2):>4g}/{maximum:g}"]
    below = [ex for ex, (score, max_score) in scores.items() if score < max_score]
    if len(scores) > 1 and below:
        started = [ex for ex in below if ex not in idle]
        lines.append(f"next: {(started or below)[0]}" + (
            ": the first started exercise below full marks; fix its first failed check first" if started
            else ": the first exercise not started"))
    return "\n".join(escape(line) for line in lines)  # a check's message may quote what the notebook's code wrote


def _number(points):
    return int(points) if float(points).is_integer() else points


def as_json(scores, checks, untouched=frozenset()):
    idle = not_started(scores, untouched)
    return json.dumps({
        "score": _number(round(sum(s for s, _ in scores.values()), 2)),
        "max_score": _number(sum(m for _, m in scores.values())),
        "exercises": {ex: {"score": _number(s), "max_score": _number(m), "started": ex not in idle,
                           "checks": checks.get(ex, [])}
                      for ex, (s, m) in scores.items()},
    })


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="posenc-check", description="Grade your exercises.ipynb with the full hidden tests of the posenc course "
                                          "(any of its assignments, posenc, posenc-advanced or posenc-current: its "
                                          "cells say which).")
    parser.add_argument("notebook", help="your copy of exercises.ipynb")
    parser.add_argument("--exercise", metavar="exNN", help="check this exercise only (ex03): its points and "
                                                               "every failed check; the exit code judges it alone")
    parser.add_argument("-v", "--verbose", action="store_true", help="every failed check of every exercise")
    parser.add_argument("--json", action="store_true", help="print only the scores, as JSON, on stdout")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        learner, assignment = read_learner_notebook(args.notebook)
        if args.exercise:
            exercises = list(points_of(assignment))
            if args.exercise not in exercises:
                raise CannotGrade(f"{args.notebook}: the assignment {assignment} has no exercise "
                                  f"{args.exercise!r}; its exercises are {', '.join(exercises)}")
        with tempfile.TemporaryDirectory(prefix="posenc-check-") as workdir:
            scores, checks = grade(args.notebook, workdir)
    except CannotGrade as error:
        print(f"posenc-check: cannot grade {error}", file=sys.stderr)
        return 2
    progress(f"graded in {time.perf_counter() - started:.1f} s")
    untouched = untouched_exercises(learner, assignment)
    if args.exercise:
        scores = {ex: points for ex, points in scores.items() if ex == args.exercise}
    shown = None if args.verbose or args.exercise else SHOWN_FAILURES
    print(as_json(scores, checks, untouched) if args.json
          else format_result(scores, checks, untouched, shown, Path(args.notebook).name, args.verbose))
    full = all(score >= max_score for score, max_score in scores.values())
    return 0 if full else 1


def points_of(assignment):
    """``{exercise: points}`` of the assignment, from its source notebook's metadata."""
    from ..layout import points_per_exercise

    return points_per_exercise(nbformat.read(str(source_notebook(assignment)), as_version=4))


if __name__ == "__main__":
    sys.exit(main())
