"""Mutation testing of the graded notebooks' tests: ``make mutants``.

Every one-change mutant of the reference solutions (:mod:`posenc_course.qa.mutation`) of each graded assignment
is graded the way a student is: a submission with the reference answers and that one function changed, graded
by ``nbgrader autograde`` in a throwaway course, with the real test cells, hidden ones included, through
the course's real grading path (sandboxed kernel, judge). An assignment's mutants are one class, graded in one
run.
Each exercise is scored by its own test cells, so mutants of different exercises share a submission
(:func:`graded_together`), and each is judged by its own exercise's score.

A mutant that loses points in its exercise is *killed*. One that keeps full marks is checked against independent
evidence (:data:`EVIDENCE`): the assignment's contract tests are run with the mutant in place of the reference
function. For the first assignment they compare the package with the independent implementations of
``tests/helpers/alternative_solutions.py``, known values and properties; for the second and third, with loops,
the papers' worked values and hand-worked cases (``tests/unit/test_advanced_*.py``, ``tests/unit/test_current_*.py``).
If they all pass, nothing tells the mutant from the reference: it is *equivalent*, and set aside (listed, so
a person can check). If one fails, the mutant is a *survivor*: a wrong answer that gets full marks. Each
survivor must be explained in ``authoring/mutants.md`` (a heading that is its name, then why it is
acceptable), or caught by a new hidden test, and a full run of an assignment must kill at least
:data:`KILL_RATE_FLOOR` of its mutants that are not equivalent.

    python -m posenc_course.qa.mutants                                # every mutant of every graded assignment
    python -m posenc_course.qa.mutants --assignment posenc-current    # one assignment's
    python -m posenc_course.qa.mutants --sample 40                    # a deterministic sample of each (CI)
    python -m posenc_course.qa.mutants --assignment posenc --exercise ex07   # one exercise
    python -m posenc_course.qa.mutants --in-process                   # judged in this process: minutes, to iterate

The exit status is 1 when a survivor is not explained in ``authoring/mutants.md``, or a full run of an
assignment kills less than :data:`KILL_RATE_FLOOR` of its non-equivalent mutants.
"""

import argparse
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..course import generate, nbgrader_env, new_course
from ..layout import ADVANCED, ASSIGNMENT, CURRENT, GRADED, NOTEBOOK, ROOT, exercise_functions
from .mutation import all_mutants

ACCEPTED_FILE = ROOT / "authoring" / "mutants.md"


def _test_modules(pattern):
    return tuple(sorted(str(path.relative_to(ROOT)) for path in ROOT.glob(pattern)))


#: ``{assignment: test files}``: the independent evidence that tells a mutant from the reference, if anything does.
EVIDENCE = {
    ASSIGNMENT: ("tests/unit/test_contract.py", "tests/unit/test_known_values.py", "tests/unit/test_properties.py"),
    ADVANCED: _test_modules("tests/unit/test_advanced_*.py"),
    CURRENT: _test_modules("tests/unit/test_current_*.py"),
}
#: The least share of its non-equivalent mutants that a full run of an assignment must kill.
KILL_RATE_FLOOR = 0.99
CONTROL = "reference"  #: a student with no change: must get full marks, or the run means nothing


def progress(message):
    print(f"mutants: {message}", file=sys.stderr, flush=True)


def sample(mutants, size):
    """`size` mutants, the same every run: at least one of every exercise, the rest shared among the exercises as
    their mutants are (the largest remainders rounding), each exercise's spread evenly over its list (so over its
    functions and kinds of change); in the list's order. Spread evenly over the whole list, an exercise with few
    mutants could be left out when another exercise gained some."""
    if size >= len(mutants):
        return list(mutants)
    exercises = {}
    for index, mutant in enumerate(mutants):
        exercises.setdefault(mutant.exercise, []).append(index)
    if len(exercises) > size:
        return [mutants[int(i * len(mutants) / size)] for i in range(size)]
    quotas = _shares(size, {exercise: len(indices) for exercise, indices in exercises.items()})
    chosen = sorted(indices[int(i * len(indices) / quotas[exercise])]
                    for exercise, indices in exercises.items() for i in range(quotas[exercise]))
    return [mutants[index] for index in chosen]


def _shares(size, counts):
    """``{name: share}``: `size` shared among `counts` (``{name: how many there are}``), one each first, then the
    rest in proportion to what each has beyond its one, by largest remainders (ties in the order given); no share
    above its count."""
    shares = dict.fromkeys(counts, 1)
    spare, beyond = size - len(counts), {name: count - 1 for name, count in counts.items()}
    total = sum(beyond.values())
    exact = {name: spare * extra / total for name, extra in beyond.items()} if total else dict.fromkeys(counts, 0)
    for name in counts:
        shares[name] += int(exact[name])
    left = size - sum(shares.values())
    for name in sorted(counts, key=lambda n: -(exact[n] - int(exact[n])))[:left]:
        shares[name] += 1
    return shares


def accepted_survivors(path=ACCEPTED_FILE):
    """``{mutant name: why it is acceptable}`` from the ``## name`` sections of `path` (fenced blocks,
    such as the mutant's diff, are not part of the reason)."""
    if not Path(path).exists():
        return {}
    accepted, name, fenced = {}, None, False
    for line in Path(path).read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("## ") and not fenced:
            name = line[3:].strip()
            accepted[name] = ""
        elif line.startswith("# ") and not fenced:  # a part's title, and its text, belong to no mutant
            name = None
        elif name is not None and line.strip() and not fenced:
            accepted[name] = (accepted[name] + " " + line.strip()).strip()
    return accepted


def graded_together(mutants, assignment=ASSIGNMENT):
    """The mutants of `assignment` in groups, each graded as one submission: at most one mutant of each
    exercise, and no mutant whose source names a function of another member's exercise. Each exercise is
    scored by its own test cells, so each mutant is judged by its own exercise's score, as if it were graded
    alone, in far fewer kernels."""
    functions = {exercise: set(names) for exercise, names in exercise_functions(assignment).items()}
    words = {mutant.key: set(re.findall(r"\w+", mutant.source)) for mutant in mutants}  # once each, not per pair

    def apart(one, other):
        return one.exercise != other.exercise and not functions[one.exercise] & words[other.key] \
            and not functions[other.exercise] & words[one.key]

    groups = []
    for mutant in mutants:
        group = next((g for g in groups if all(apart(mutant, other) for other in g)), None)
        if group is None:
            groups.append([mutant])
        else:
            group.append(mutant)
    return groups


def _course_with(groups, folder, first, assignment):
    """A new course in `folder` whose submissions of `assignment` are the reference (the control) and `groups`
    of mutants (:func:`graded_together`), numbered from `first`; return it and ``{student: group}``."""
    from ..submissions import make_submission, reference_answers, write_submission

    course = new_course(folder)
    release = generate(course, assignment)
    answers = reference_answers(course / "source" / assignment / NOTEBOOK)
    write_submission(make_submission(answers, release_notebook=release), course / "submitted", CONTROL, assignment)
    students = {}
    for number, group in enumerate(groups, first):
        students[f"mutants-{number:03d}"] = group
        functions = {mutant.function: mutant.source for mutant in group}
        write_submission(make_submission(answers, functions, release_notebook=release), course / "submitted",
                         f"mutants-{number:03d}", assignment)
    return course, students


def grade(mutants, workdir, workers=1, assignment=ASSIGNMENT):
    """Autograde every mutant of `assignment` (several to a submission: :func:`graded_together`), plus the
    reference as a control in each course; return ``{mutant key: (score, max)}`` of each mutant's exercise,
    and ``{CONTROL: (score, max)}`` of the whole notebook. With `workers` > 1 the submissions are shared
    among that many courses, each graded by its own ``nbgrader autograde`` at the same time."""
    from ..report import exercise_scores

    groups = graded_together(mutants, assignment)
    shards = [groups[i::workers] for i in range(workers) if groups[i::workers]] or [[]]
    courses, first = [], 1
    for i, shard in enumerate(shards):
        courses.append(_course_with(shard, Path(workdir) / f"course-{i}", first, assignment))
        first += len(shard)
    total = len(groups) + len(courses)
    progress(f"grading {len(mutants)} mutants in {len(groups)} submissions (one mutant per exercise in each), "
             f"and the reference, with nbgrader autograde, {len(courses)} at a time")
    started, done, lock = time.monotonic(), [0], threading.Lock()

    def follow(run, log):
        for line in run.stdout:
            log.append(line)
            if "] Autograding " in line:  # nbgrader's log line as it starts a submission
                with lock:
                    done[0] += 1
                    if done[0] % 10 == 0:
                        elapsed = time.monotonic() - started
                        progress(f"{done[0]}/{total} submissions graded, {elapsed:.0f} s, "
                                 f"about {elapsed / done[0] * (total - done[0]):.0f} s left")

    runs, logs, readers = [], [], []
    for course, _ in courses:
        run = subprocess.Popen([sys.executable, "-m", "nbgrader", "autograde", assignment, "--force"], cwd=course,
                               env=nbgrader_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        log = []
        reader = threading.Thread(target=follow, args=(run, log), daemon=True)
        reader.start()
        runs.append(run), logs.append(log), readers.append(reader)
    scores = {}
    for (course, students), run, log, reader in zip(courses, runs, logs, readers):
        code = run.wait()
        reader.join()
        if code != 0:
            raise RuntimeError(f"nbgrader autograde failed in {course}:\n" + "".join(log[-40:]))
        graded = exercise_scores(course / "gradebook.db", assignment)
        control = tuple(map(sum, zip(*graded[CONTROL].values())))
        if control[0] < control[1]:
            lost = ", ".join(f"{exercise} {got:g} of {most:g}" for exercise, (got, most) in graded[CONTROL].items()
                             if got < most)
            raise RuntimeError(f"the reference answers scored {control[0]:g} of {control[1]:g} in {course} ({lost}): "
                               "fix the notebook first. What nbgrader said as it graded them:\n"
                               + "".join(_said_of(CONTROL, log)[-40:]))
        if scores.get(CONTROL, control) != control:
            raise RuntimeError("the reference answers scored differently in two courses")
        scores[CONTROL] = control
        for student, group in students.items():
            for mutant in group:
                scores[mutant.key] = graded[student][mutant.exercise]
    progress(f"graded in {time.monotonic() - started:.0f} s")
    return scores


def _said_of(student, log):
    """The lines of nbgrader's `log` from its start on `student`'s submission to the next one's."""
    said, theirs = [], False
    for line in log:
        if "] Autograding " in line:
            theirs = f"{os.sep}{student}{os.sep}" in line
        if theirs:
            said.append(line)
    return said


def judge_in_process(mutants, assignment=ASSIGNMENT):
    """What :func:`grade` returns, but each mutant judged in this process, against the source notebook's
    hidden tests of its own exercise, by the real judge without a kernel (:mod:`posenc_course.authoring.dryrun`):
    about a second a mutant, to iterate on the tests. A mutant that runs past a minute counts as killed, as
    the grader's time limit would kill it. nbgrader's run (:func:`grade`) is the proof."""
    import signal

    from ..authoring.dryrun import run_against_reference
    from ..layout import exercise_of, grade_id, is_test_cell, points_per_test_cell, source_notebook
    from ..submissions import make_submission

    def score(mutant):
        notebook = make_submission(functions={mutant.function: mutant.source} if mutant else None,
                                   release_notebook=source_notebook(assignment))
        if mutant:
            notebook.cells = [cell for cell in notebook.cells if not is_test_cell(cell)
                              or exercise_of(grade_id(cell)) == mutant.exercise]
        points = points_per_test_cell(notebook)
        signal.alarm(60)
        try:
            verdicts = run_against_reference(notebook)
        except TimeoutError:
            verdicts = dict.fromkeys(points, "timed out")
        finally:
            signal.alarm(0)
        return sum(points[name] for name, error in verdicts.items() if error is None), sum(points.values())

    def timed_out(*_):
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, timed_out)
    started = time.monotonic()
    progress(f"judging {len(mutants)} mutants in this process, without kernels")
    try:
        scores = {CONTROL: score(None)}
        for number, mutant in enumerate(mutants, 1):
            scores[mutant.key] = score(mutant)
            if number % 50 == 0:
                elapsed = time.monotonic() - started
                progress(f"{number}/{len(mutants)} judged, {elapsed:.0f} s, "
                         f"about {elapsed / number * (len(mutants) - number):.0f} s left")
    finally:
        signal.signal(signal.SIGALRM, previous)
    return scores


def _write_mutant(mutant, folder):
    path = Path(folder) / f"{mutant.key}.json"
    path.write_text(json.dumps({"module": mutant.module, "function": mutant.function, "source": mutant.source}))
    return path


def evidence_against(mutant, workdir, evidence=EVIDENCE[ASSIGNMENT]):
    """The first test of `evidence` that fails with `mutant` in place, or None: nothing tells them apart."""
    path = _write_mutant(mutant, workdir)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "posenc_course.qa.mutant_plugin",
         f"--mutant={path}", *evidence],
        cwd=ROOT, env={**os.environ, "CI": "1"}, capture_output=True, text=True, timeout=1800)
    if result.returncode == 0:
        return None
    failed = re.findall(r"^FAILED (\S+)", result.stdout, re.M)
    if not failed:
        raise RuntimeError(f"the contract tests could not run with mutant {mutant.key}:\n{result.stdout[-3000:]}"
                           f"{result.stderr[-2000:]}")
    return failed[0]


@dataclass
class Outcome:
    killed: list = field(default_factory=list)
    equivalent: list = field(default_factory=list)
    survived: list = field(default_factory=list)  #: ``(mutant, the contract test that tells it apart)``


def run(mutants, workdir, workers=1, assignment=ASSIGNMENT, in_process=False):
    """Grade `mutants` of `assignment` (or judge them in this process), then weigh the evidence on each that
    kept full marks; return an Outcome."""
    scores = judge_in_process(mutants, assignment) if in_process else grade(mutants, workdir, workers, assignment)
    score, maximum = scores[CONTROL]
    if score != maximum:
        raise RuntimeError(f"the reference answers scored {score:g} of {maximum:g}: fix the notebook first")
    outcome = Outcome()
    full = [m for m in mutants if scores[m.key][0] >= scores[m.key][1]]
    outcome.killed = [m for m in mutants if scores[m.key][0] < scores[m.key][1]]
    if full:
        progress(f"{len(full)} mutants kept full marks: running the contract tests against each")
    for number, mutant in enumerate(full, 1):
        failing = evidence_against(mutant, workdir, EVIDENCE[assignment])
        if failing is None:
            outcome.equivalent.append(mutant)
        else:
            outcome.survived.append((mutant, failing))
        if number % 10 == 0:
            progress(f"{number}/{len(full)} weighed")
    return outcome


def tally(mutants, outcome):
    """``{exercise: {"mutants": n, "equivalent": n, "killed": n}}``, in exercise order, ``"all"`` last."""
    equivalent = {m.key for m in outcome.equivalent}
    killed = {m.key for m in outcome.killed}
    counts = {}
    for mutant in sorted(mutants, key=lambda m: m.exercise):
        for group in (mutant.exercise, "all"):
            count = counts.setdefault(group, {"mutants": 0, "equivalent": 0, "killed": 0})
            count["mutants"] += 1
            count["equivalent"] += mutant.key in equivalent
            count["killed"] += mutant.key in killed
    if "all" in counts:
        counts["all"] = counts.pop("all")  # last
    return counts


def kill_rates(mutants, outcome):
    """``{exercise: (killed, non-equivalent)}``, in exercise order, and ``"all"`` last."""
    return {group: (count["killed"], count["mutants"] - count["equivalent"])
            for group, count in tally(mutants, outcome).items()}


#: The line ``make mutants`` prints between the tables of kill rates and the details (the site shows what is above it).
DETAILS = "Survivors and equivalents, by assignment"


def table(mutants, outcome):
    """The kill rates of a run: one line per exercise, and ``all``."""
    lines = [f"{'exercise':<9} {'mutants':>7} {'equivalent':>10} {'killed':>7} {'kill rate':>9}"]
    for exercise, count in tally(mutants, outcome).items():
        counted = count["mutants"] - count["equivalent"]
        rate = f"{100 * count['killed'] / counted:.1f}%" if counted else "-"
        lines.append(f"{exercise:<9} {count['mutants']:>7} {count['equivalent']:>10} {count['killed']:>7} {rate:>9}")
    return "\n".join(lines)


def report(mutants, outcome, accepted):
    """The text ``make mutants`` prints of a run: kill rates, survivors with their diffs, and the equivalents."""
    return table(mutants, outcome) + "\n\n" + details(mutants, outcome, accepted)


def details(mutants, outcome, accepted):
    """The survivors of a run, with their diffs and whether each is explained, and the equivalents."""
    import posenc_solutions

    def original(mutant):
        return inspect.getsource(getattr(posenc_solutions, mutant.function))

    lines = []
    if outcome.survived:
        lines.append(f"{len(outcome.survived)} survivor(s): wrong answers that keep full marks")
    for mutant, failing in outcome.survived:
        why = accepted.get(mutant.name)
        lines += ["", f"## {mutant.name}",
                  f"   {mutant.kind} mutant {mutant.key}, posenc_solutions/{mutant.module.rsplit('.', 1)[-1]}.py "
                  f"line {mutant.line}; told apart by {failing}",
                  (f"   accepted: {why}" if why else
                   f"   NOT EXPLAINED: add a hidden test of the concept it breaks, or explain it in "
                   f"{ACCEPTED_FILE.relative_to(ROOT)} under the heading above"),
                  mutant.diff(original(mutant)).rstrip()]
    if outcome.equivalent:
        lines += ["", f"{len(outcome.equivalent)} equivalent mutant(s) set aside: the assignment's "
                      "evidence tests (EVIDENCE) cannot tell them from the reference"]
        lines += [f"   {m.name}   [{m.key}, line {m.line}]" for m in outcome.equivalent]
    return "\n".join(lines)


def below_floor(mutants, outcome):
    """Whether the run kills less than :data:`KILL_RATE_FLOOR` of its non-equivalent mutants."""
    killed, counted = kill_rates(mutants, outcome).get("all", (0, 0))
    return counted > 0 and killed < KILL_RATE_FLOOR * counted


def main(argv=None):
    parser = argparse.ArgumentParser(prog="make mutants", description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", action="append", choices=GRADED,
                        help="only this graded assignment (repeatable; default: every one, in order)")
    parser.add_argument("--sample", type=int, help="grade only this many mutants of each assignment, spread evenly "
                                                   "(deterministic)")
    parser.add_argument("--exercise", action="append", help="only this exercise's functions (repeatable; with one "
                                                            "--assignment, as every assignment has an ex01)")
    parser.add_argument("--json", type=Path, help="also write the outcome here, as JSON, by assignment")
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1),
                        help="nbgrader runs at the same time, each on its share of the mutants (default: the "
                             "cores, at most 4)")
    parser.add_argument("--in-process", action="store_true",
                        help="judge each mutant in this process, without nbgrader or kernels: minutes instead of "
                             "an hour, to iterate on the tests; the full run is the proof")
    args = parser.parse_args(argv)
    assignments = args.assignment or list(GRADED)
    if args.exercise and len(assignments) != 1:
        parser.error("--exercise needs one --assignment: every graded assignment has an ex01")
    accepted, outcomes, failed, tables, texts = accepted_survivors(), {}, [], [], []
    for assignment in assignments:
        mutants = all_mutants(args.exercise, assignment)
        if not mutants:
            parser.error(f"{assignment} has no exercise {', '.join(args.exercise)}: it has "
                         f"{', '.join(exercise_functions(assignment))}")
        chosen = sample(mutants, args.sample) if args.sample else mutants
        progress(f"{assignment}: {len(chosen)} of {len(mutants)} mutants")
        with tempfile.TemporaryDirectory(prefix="posenc-mutants-") as workdir:
            outcome = run(chosen, workdir, max(1, args.workers), assignment, args.in_process)
        title = f"{assignment}{' (judged in process)' if args.in_process else ''}"
        tables.append(f"{title}\n{table(chosen, outcome)}")
        if not (args.sample or args.exercise) and below_floor(chosen, outcome):
            failed.append(assignment)
            tables.append(f"BELOW THE FLOOR: {assignment} kills less than {KILL_RATE_FLOOR:.0%} of its non-equivalent "
                          "mutants; add hidden tests of the concepts its survivors break")
        texts.append(f"{title}: " + (details(chosen, outcome, accepted).lstrip("\n") or "no survivor, no equivalent"))
        outcomes[assignment] = {
            "rates": kill_rates(chosen, outcome),
            "killed": [m.key for m in outcome.killed],
            "equivalent": [m.name for m in outcome.equivalent],
            "survived": [{"name": m.name, "key": m.key, "told_apart_by": t} for m, t in outcome.survived],
        }
        if any(m.name not in accepted for m, _ in outcome.survived):
            failed.append(assignment)
    print("\n\n".join(tables) + f"\n\n{DETAILS}\n\n" + "\n\n".join(texts))
    if args.json:
        args.json.write_text(json.dumps(outcomes, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
