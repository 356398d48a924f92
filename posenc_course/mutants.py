"""Mutation testing of the notebook's tests: ``make mutants``.

Every one-change mutant of the reference solutions (:mod:`posenc_course.mutation`) is graded the way
a student is: a submission with the reference answers and that one function changed, graded by
``nbgrader autograde`` in a throwaway course, with the real test cells, hidden ones included, through
the course's real grading path (sandboxed kernel, judge). All mutants are one class, graded in one run.
Each exercise is scored by its own test cells, so mutants of different exercises share a submission
(:func:`graded_together`), and each is judged by its own exercise's score.

A mutant that loses points in its exercise is *killed*. One that keeps full marks is checked against independent
evidence: the contract tests (``tests/test_contract.py``, which compare the package with the
independent implementations of ``tests/alternative_solutions.py``, ``tests/test_known_values.py`` and
``tests/test_properties.py``) are run with the mutant in place of the reference function. If they all
pass, nothing tells the mutant from the reference: it is *equivalent*, and set aside (listed, so a
person can check). If one fails, the mutant is a *survivor*: a wrong answer that gets full marks. Each
survivor must be explained in ``authoring/mutants.md`` (a heading that is its name, then why it is
acceptable), or caught by a new hidden test.

    python -m posenc_course.mutants                  # every mutant (authors; it prints its progress)
    python -m posenc_course.mutants --sample 40      # a deterministic sample (what CI runs)
    python -m posenc_course.mutants --exercise ex07  # one exercise

The exit status is 1 when a survivor is not explained in ``authoring/mutants.md``.
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

from .course import generate, nbgrader_env, new_course
from .layout import ASSIGNMENT, ROOT
from .mutation import all_mutants

ACCEPTED_FILE = ROOT / "authoring" / "mutants.md"
#: The independent evidence that tells a mutant from the reference, if anything does.
EVIDENCE = ("tests/test_contract.py", "tests/test_known_values.py", "tests/test_properties.py")
CONTROL = "reference"  #: a student with no change: must get full marks, or the run means nothing


def progress(message):
    print(f"mutants: {message}", file=sys.stderr, flush=True)


def sample(mutants, size):
    """`size` mutants spread evenly over the list (so over every exercise and kind), the same every run."""
    if size >= len(mutants):
        return list(mutants)
    step = len(mutants) / size
    return [mutants[int(i * step)] for i in range(size)]


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
        elif name is not None and line.strip() and not fenced:
            accepted[name] = (accepted[name] + " " + line.strip()).strip()
    return accepted


def graded_together(mutants):
    """The mutants in groups, each graded as one submission: at most one mutant of each exercise, and no
    mutant whose source names a function of another member's exercise. Each exercise is scored by its own
    test cells, so each mutant is judged by its own exercise's score, as if it were graded alone, in far
    fewer kernels."""
    import posenc_solutions

    functions = {exercise: set(names) for exercise, names in posenc_solutions.EXERCISES.items()}

    def apart(one, other):
        return one.exercise != other.exercise and not functions[one.exercise] & set(re.findall(r"\w+", other.source)) \
            and not functions[other.exercise] & set(re.findall(r"\w+", one.source))

    groups = []
    for mutant in mutants:
        group = next((g for g in groups if all(apart(mutant, other) for other in g)), None)
        if group is None:
            groups.append([mutant])
        else:
            group.append(mutant)
    return groups


def _course_with(groups, folder, first):
    """A new course in `folder` whose submissions are the reference (the control) and `groups` of mutants
    (:func:`graded_together`), numbered from `first`; return it and ``{student: group}``."""
    from .submissions import make_submission, reference_answers, write_submission

    course = new_course(folder)
    release = generate(course)
    answers = reference_answers(course / "source" / ASSIGNMENT / "exercises.ipynb")
    write_submission(make_submission(answers, release_notebook=release), course / "submitted", CONTROL)
    students = {}
    for number, group in enumerate(groups, first):
        students[f"mutants-{number:03d}"] = group
        functions = {mutant.function: mutant.source for mutant in group}
        write_submission(make_submission(answers, functions, release_notebook=release), course / "submitted",
                         f"mutants-{number:03d}")
    return course, students


def grade(mutants, workdir, workers=1):
    """Autograde every mutant (several to a submission: :func:`graded_together`), plus the reference as
    a control in each course; return ``{mutant key: (score, max)}`` of each mutant's exercise, and
    ``{CONTROL: (score, max)}`` of the whole notebook. With `workers` > 1 the submissions are shared
    among that many courses, each graded by its own ``nbgrader autograde`` at the same time."""
    from .report import exercise_scores

    groups = graded_together(mutants)
    shards = [groups[i::workers] for i in range(workers) if groups[i::workers]] or [[]]
    courses, first = [], 1
    for i, shard in enumerate(shards):
        courses.append(_course_with(shard, Path(workdir) / f"course-{i}", first))
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
        run = subprocess.Popen([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"], cwd=course,
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
        graded = exercise_scores(course / "gradebook.db")
        control = tuple(map(sum, zip(*graded[CONTROL].values())))
        if scores.get(CONTROL, control) != control:
            raise RuntimeError("the reference answers scored differently in two courses")
        scores[CONTROL] = control
        for student, group in students.items():
            for mutant in group:
                scores[mutant.key] = graded[student][mutant.exercise]
    progress(f"graded in {time.monotonic() - started:.0f} s")
    return scores


def _write_mutant(mutant, folder):
    path = Path(folder) / f"{mutant.key}.json"
    path.write_text(json.dumps({"module": mutant.module, "function": mutant.function, "source": mutant.source}))
    return path


def evidence_against(mutant, workdir):
    """The first contract test that fails with `mutant` in place, or None: nothing tells them apart."""
    path = _write_mutant(mutant, workdir)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "posenc_course.mutant_plugin",
         f"--mutant={path}", *EVIDENCE],
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


def run(mutants, workdir, workers=1):
    """Grade `mutants`, then weigh the evidence on each that kept full marks; return an Outcome."""
    scores = grade(mutants, workdir, workers)
    score, maximum = scores[CONTROL]
    if score != maximum:
        raise RuntimeError(f"the reference answers scored {score:g} of {maximum:g}: fix the notebook first")
    outcome = Outcome()
    full = [m for m in mutants if scores[m.key][0] >= scores[m.key][1]]
    outcome.killed = [m for m in mutants if scores[m.key][0] < scores[m.key][1]]
    if full:
        progress(f"{len(full)} mutants kept full marks: running the contract tests against each")
    for number, mutant in enumerate(full, 1):
        failing = evidence_against(mutant, workdir)
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


def report(mutants, outcome, accepted):
    """The text ``make mutants`` prints: kill rates, survivors with their diffs, and the equivalents."""
    import posenc_solutions

    def original(mutant):
        return inspect.getsource(getattr(posenc_solutions, mutant.function))

    lines = [f"{'exercise':<9} {'mutants':>7} {'equivalent':>10} {'killed':>7} {'kill rate':>9}"]
    for exercise, count in tally(mutants, outcome).items():
        counted = count["mutants"] - count["equivalent"]
        rate = f"{100 * count['killed'] / counted:.1f}%" if counted else "-"
        lines.append(f"{exercise:<9} {count['mutants']:>7} {count['equivalent']:>10} {count['killed']:>7} {rate:>9}")
    lines.append("")
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
        lines += ["", f"{len(outcome.equivalent)} equivalent mutant(s) set aside: the contract tests and the "
                      "alternative solutions cannot tell them from the reference"]
        lines += [f"   {m.name}   [{m.key}, line {m.line}]" for m in outcome.equivalent]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="make mutants", description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, help="grade only this many mutants, spread evenly (deterministic)")
    parser.add_argument("--exercise", action="append", help="only this exercise's functions (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the outcome here, as JSON")
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1),
                        help="nbgrader runs at the same time, each on its share of the mutants (default: the "
                             "cores, at most 4)")
    args = parser.parse_args(argv)
    mutants = all_mutants(args.exercise)
    chosen = sample(mutants, args.sample) if args.sample else mutants
    progress(f"{len(chosen)} of {len(mutants)} mutants")
    with tempfile.TemporaryDirectory(prefix="posenc-mutants-") as workdir:
        outcome = run(chosen, workdir, max(1, args.workers))
    accepted = accepted_survivors()
    print(report(chosen, outcome, accepted))
    if args.json:
        args.json.write_text(json.dumps({
            "rates": kill_rates(chosen, outcome),
            "killed": [m.key for m in outcome.killed],
            "equivalent": [m.name for m in outcome.equivalent],
            "survived": [{"name": m.name, "key": m.key, "told_apart_by": t} for m, t in outcome.survived],
        }, indent=1))
    unexplained = [m for m, _ in outcome.survived if m.name not in accepted]
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
