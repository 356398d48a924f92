"""posenc-check: grade your own copy of exercises.ipynb with the full hidden tests.

It runs nbgrader's real autograde in a private, temporary course built from this
repository's source notebooks, so the score is the one an instructor's grading gives. It grades
every graded assignment (``posenc``, ``posenc-advanced``, ``posenc-current``): the notebook's cells say which.

    posenc-check exercises.ipynb           # one line per exercise (points, or "not attempted"), at most
                                           # 3 failed checks under one that lost points, the total
    posenc-check exercises.ipynb --exercise ex03   # that exercise only, every failed check
    posenc-check exercises.ipynb -v        # every failed check of every exercise
    posenc-check exercises.ipynb --json    # {"score": S, "max_score": M, "by_hand_points": H, "exercises": {exNN: {
                                           #   "score", "max_score", "attempt", "started", "checks":
                                           #   [{"test", "line", "hidden", "passed", "message"}]}}}

The scores are the automatic ones: the concept questions and the functions. The written reflections are graded
by hand, by the instructor; posenc-check says how many points they hold, apart, and never grades them.

Whether an exercise is attempted is the class report's (:mod:`hardened_grading.attempts`, with this course's
stubs: :data:`posenc_course.class_report.ATTEMPTS`): *not attempted* when every answer cell of it still holds
the stub, *started* when some do, *answered* when none does ("attempt" in the JSON; "started" there is true for
both of the last two).

The assignment prepared with its hidden tests (its gradebook) is kept in ``~/.cache/posenc/`` for the next run
(:func:`prepare_assignment`).

Exit codes: 0 at full automatic marks (of the one exercise, with --exercise), 1 below, 2 if the file cannot be
graded or the exercise does not exist.
"""

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from ..course import load_config, nbgrader_api, nbgrader_env, new_course
from hardened_grading.attempts import NOT_ATTEMPTED, part_states
from hardened_grading.cells import is_answer_cell
from hardened_grading.judge.messages import elide, repeated_together
from hardened_grading.judge.syntax import syntax_error_words, syntax_problem
from hardened_grading.summary import checks_by_exercise, shorten, tested_name
from hardened_grading.untrusted.terminal import escape
from ..class_report import ATTEMPTS
from ..layout import GRADED, NOTEBOOK, exercise_of, grade_id, source_notebook

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
    prepare_assignment(course, assignment, api)
    progress("running your notebook with the full tests (nbgrader autograde)")
    result = api.autograde(assignment, LEARNER)
    autograded = course / "autograded" / LEARNER / assignment / NOTEBOOK
    if not result["success"] or not autograded.exists():
        raise CannotGrade("nbgrader could not grade this notebook:\n" + result.get("log", "")[-2000:])
    from ..report import exercise_scores

    scores = exercise_scores(course / "gradebook.db", assignment)[LEARNER]
    return scores, checks_by_exercise(autograded, full=False, part_of=exercise_of)  # as a student reads them before the due date


def prepare_assignment(course, assignment, api):
    """Put `assignment`, with its hidden tests, in `course`'s gradebook: ``nbgrader generate_assignment``, or the
    gradebook it made on an earlier run for the same source, config, nbgrader and code (:func:`gradebook_key`),
    kept in :func:`cache_folder` (a third of a run's time). A cache that cannot be read or written is passed by."""
    kept = cache_folder() / f"{assignment}-{gradebook_key(course, assignment)}.db"
    if _holds_assignment(kept, assignment):
        progress("preparing the assignment with its hidden tests (as an earlier run prepared it)")
        shutil.copyfile(kept, course / "gradebook.db")
        return
    progress("preparing the assignment with its hidden tests")
    result = api.generate_assignment(assignment)
    if not result["success"]:
        raise RuntimeError("nbgrader generate_assignment failed:\n" + result.get("error", result.get("log", "")))
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_name(f"{kept.name}.{os.getpid()}.partial")
        shutil.copyfile(course / "gradebook.db", partial)
        os.replace(partial, kept)  # whole or not at all: another posenc-check may be reading it
    except OSError:
        pass


def cache_folder():
    """Where posenc-check keeps what it prepared: ``$XDG_CACHE_HOME/posenc`` (``~/.cache/posenc``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "posenc"


def gradebook_key(course, assignment):
    """What a prepared gradebook depends on, hashed: the assignment's source notebook, the course's config, the
    Python and nbgrader versions, and the code of the engine and of this course (any edit makes a new key)."""
    import hardened_grading
    import nbgrader

    digest = hashlib.sha256()
    for part in (sys.version, nbgrader.__version__):
        digest.update(part.encode() + b"\0")
    packages = [Path(hardened_grading.__file__).parent, Path(__file__).parents[1]]
    files = [course / "source" / assignment / NOTEBOOK, course / "nbgrader_config.py",
             *(path for package in packages for path in sorted(package.rglob("*.py")))]
    for path in files:
        digest.update(str(path.name).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def _holds_assignment(gradebook, assignment):
    """Whether the SQLite file `gradebook` opens and holds `assignment` (a kept one, whole)."""
    import sqlite3

    if not gradebook.is_file():
        return False
    try:
        with contextlib.closing(sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True)) as db:
            return db.execute("SELECT 1 FROM assignment WHERE name = ?", (assignment,)).fetchone() is not None
    except sqlite3.Error:
        return False


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


def exercise_states(notebook):
    """``{exercise: state}`` of the learner's `notebook`: :data:`~hardened_grading.attempts.NOT_ATTEMPTED`,
    ``STARTED`` or ``ANSWERED``, as the class report tells them (:func:`hardened_grading.attempts.part_states`)."""
    return part_states(notebook, exercise_of, ATTEMPTS)


def syntax_errors(notebook):
    """``{exercise: [line, ...]}``: the answer cells of the learner's `notebook` that do not compile, one line each,
    which says where and what to do. Their names are not defined when the tests run, which the checks say as a
    ``NameError``: this says why."""
    found = {}
    for cell in notebook.cells:
        problem = syntax_problem(cell.source) if is_answer_cell(cell) else None
        if problem is not None:
            found.setdefault(exercise_of(grade_id(cell) or ""), []).append(
                f"the answer cell {grade_id(cell)} has {syntax_error_words(problem)}: fix it, run it again, and "
                "save the notebook")
    return found


def not_attempted(states):
    """The exercises of `states` (:func:`exercise_states`) not attempted: every answer cell still the stub."""
    return {exercise for exercise, state in states.items() if state == NOT_ATTEMPTED}


def format_result(scores, checks, states=None, shown=SHOWN_FAILURES, notebook="exercises.ipynb",
                  verbose=False, broken=None, by_hand=0):
    """The table a learner reads: one line per exercise with its points ("not attempted" for one whose
    answers are all still the stub, :func:`exercise_states`), its answer cells with a syntax error (`broken`,
    :func:`syntax_errors`; under any exercise) and, under an attempted exercise that lost points, its failed checks, at
    most `shown` lines of them (None: all; :func:`failure_lines`), and how many more; then the total and which
    exercise to work on next. `verbose`: the failed checks of exercises not attempted too. `by_hand`: the points of the
    reflections, which a person grades: said apart, never graded here."""
    idle, broken = not_attempted(states or {}), broken or {}
    lines = [f"{'exercise':<9} {'points':>9}", "-" * 72]
    for exercise, (score, max_score) in scores.items():
        failed = [c for c in checks.get(exercise, []) if not c["passed"]]
        note = (NOT_ATTEMPTED if exercise in idle
                else f"{len(failed)} failed check{'' if len(failed) == 1 else 's'}" if failed else "")
        lines.append(f"{exercise:<9} {score:>4g}/{max_score:<4g}  {note}".rstrip())
        lines += [f"    {text}" for text in broken.get(exercise, [])]  # said even where the stub is left
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
    if by_hand:
        lines.append(f"{'by hand':<9} {by_hand:g} points for the written reflections (c): your instructor grades "
                     "them, posenc-check does not")
    below = [ex for ex, (score, max_score) in scores.items() if score < max_score]
    if len(scores) > 1 and below:
        attempted = [ex for ex in below if ex not in idle]
        lines.append(f"next: {(attempted or below)[0]}" + (
            ": the first attempted exercise below full marks; fix its first failed check first" if attempted
            else ": the first exercise not attempted"))
    return "\n".join(escape(line) for line in lines)  # a check's message may quote what the notebook's code wrote


def _number(points):
    return int(points) if float(points).is_integer() else points


def as_json(scores, checks, states=None, by_hand=0):
    """The automatic scores, each exercise's attempt (:func:`exercise_states`) and checks, and the points graded by
    hand (`by_hand`, not graded here), as JSON."""
    states = states or {}
    return json.dumps({
        "score": _number(round(sum(s for s, _ in scores.values()), 2)),
        "max_score": _number(sum(m for _, m in scores.values())),
        "by_hand_points": _number(by_hand),
        "exercises": {ex: {"score": _number(s), "max_score": _number(m), "attempt": states.get(ex),
                           "started": states.get(ex) != NOT_ATTEMPTED, "checks": checks.get(ex, [])}
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
    states = exercise_states(learner)
    if args.exercise:
        scores = {ex: points for ex, points in scores.items() if ex == args.exercise}
    shown = None if args.verbose or args.exercise else SHOWN_FAILURES
    by_hand = 0 if args.exercise else hand_points_of(assignment)
    print(as_json(scores, checks, states, by_hand) if args.json
          else format_result(scores, checks, states, shown, Path(args.notebook).name, args.verbose,
                             syntax_errors(learner), by_hand))
    full = all(score >= max_score for score, max_score in scores.values())
    return 0 if full else 1


def hand_points_of(assignment):
    """The points of the assignment's reflections, graded by hand, from its source notebook's metadata."""
    from ..layout import points_by_hand

    return points_by_hand(nbformat.read(str(source_notebook(assignment)), as_version=4))


def points_of(assignment):
    """``{exercise: points}`` of the assignment, from its source notebook's metadata."""
    from ..layout import points_per_exercise

    return points_per_exercise(nbformat.read(str(source_notebook(assignment)), as_version=4))


if __name__ == "__main__":
    sys.exit(main())
