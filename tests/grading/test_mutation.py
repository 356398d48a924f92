"""Mutation testing (``make mutants``): the mutator makes the changes it promises, the evidence check
tells a wrong answer from an equivalent one, and a deterministic sample of mutants of the reference,
graded through the real ``nbgrader autograde``, is killed (or set aside by evidence, or explained)."""

import ast
import json
import subprocess
import sys

import pytest

import posenc_solutions
from posenc_course.qa import mutants, mutation
from posenc_course.layout import GRADED, ROOT, exercise_functions

from ..helpers.wrong_solutions import WRONG


@pytest.mark.parametrize("kind, line, expected", [
    ("arithmetic", "y = a + b * c", {"y = a - b * c", "y = a + b / c"}),
    ("arithmetic", "y = a // b - c % d ** 2", {"y = a / b - c % d ** 2", "y = a // b + c % d ** 2",
                                               "y = a // b - c // d ** 2", "y = a // b - c % d * 2"}),
    ("arithmetic", "y += a", {"y -= a"}),
    ("arithmetic", "y = a & b", {"y = a | b"}),
    ("comparison", "y = a < b <= c", {"y = a <= b <= c", "y = a < b < c"}),
    ("comparison", "y = a is not None", {"y = a is None"}),
    ("comparison", "y = a not in b", {"y = a in b"}),
    ("boolean", "y = a and b", {"y = a or b"}),
    ("unary", "y = -a", {"y = a"}),
    ("number", "y = f(a, 2.5)", {"y = f(a, 3.5)", "y = f(a, 1.5)"}),
    ("bool", "y = f(a, keepdims=True)", {"y = f(a, keepdims=False)"}),
    ("sibling", "y = np.maximum(a, b).sum(axis=-1)", {"y = np.minimum(a, b).sum(axis=-1)",
                                                      "y = np.maximum(a, b).mean(axis=-1)"}),
    ("sibling", "y = np.floor(np.sin(a))", {"y = np.ceil(np.sin(a))", "y = np.floor(np.cos(a))"}),
    ("sibling", "y = max(a, b)", {"y = min(a, b)"}),
])
def test_each_operator_makes_its_changes(kind, line, expected):
    source = f"def f(a, b, c, d):\n    {line}\n    return y\n"
    made = {mutated.splitlines()[1].strip() for k, _, mutated in mutation.changes(source) if k == kind}
    assert made == expected


def test_error_messages_and_docstrings_are_not_mutated():
    source = ('def f(x):\n    """Shape (L - 1, 2)."""\n    if x < 0:\n'
              '        raise ValueError(f"x must be >= 0, got {x - 1}")\n    return x\n')
    lines = {line for _, line, _ in mutation.changes(source)}
    assert lines == {3}, "only the condition may change"


@pytest.mark.parametrize("assignment", GRADED)
def test_every_function_of_the_contract_has_mutants_each_one_line_apart(assignment):
    found = mutation.all_mutants(assignment=assignment)
    functions = {name for names in exercise_functions(assignment).values() for name in names}
    assert {m.function for m in found} == functions
    assert len({m.key for m in found}) == len(found), "two mutants share a key"
    for mutant in found:
        ast.parse(mutant.source)
        diff = mutant.diff(mutation.inspect.getsource(getattr(posenc_solutions, mutant.function)))
        changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        assert changed == [f"-{mutant.before}", f"+{mutant.after}"], mutant.name


@pytest.mark.parametrize("assignment", GRADED)
def test_the_sample_is_spread_over_every_exercise_and_the_same_each_time(assignment):
    found = mutation.all_mutants(assignment=assignment)
    chosen = mutants.sample(found, 40)
    assert len(chosen) == 40 and chosen == mutants.sample(mutation.all_mutants(assignment=assignment), 40)
    assert {m.exercise for m in chosen} == set(exercise_functions(assignment))


@pytest.mark.parametrize("assignment", GRADED)
def test_every_assignment_has_evidence_that_reaches_each_of_its_functions(assignment):
    """The evidence tests of an assignment exist, and each function it asks for is named in one of them (the
    mutant plugin runs only the tests that name the function or a caller of it)."""
    files = mutants.EVIDENCE[assignment]
    assert files and all((ROOT / path).is_file() for path in files), files
    text = "\n".join((ROOT / path).read_text() for path in files)
    functions = {name for names in exercise_functions(assignment).values() for name in names}
    assert not {name for name in functions if name not in text}


def test_the_evidence_tells_a_wrong_answer_from_an_equivalent_one(tmp_path):
    """A known wrong answer fails a contract test; a rewrite that changes nothing fails none."""
    exercise, functions = WRONG["rope_half_split"]
    [(name, code)] = functions.items()
    wrong = mutation.Mutant(exercise, name, "posenc_solutions.rope", "hand", 0, "", "", code)
    reference = mutation.inspect.getsource(posenc_solutions.rotation_2d)
    rewritten = reference.replace("return np.array(", "return 1.0 * np.array(")
    assert rewritten != reference
    equivalent = mutation.Mutant("ex06", "rotation_2d", "posenc_solutions.rope", "hand", 0, "", "", rewritten)
    assert mutants.evidence_against(wrong, tmp_path) is not None
    assert mutants.evidence_against(equivalent, tmp_path) is None


def test_a_sample_of_mutants_graded_by_nbgrader_is_killed_or_set_aside_by_evidence(tmp_path):
    """What CI runs of ``make mutants``: every sampled mutant that keeps full marks is equivalent by
    the evidence, or explained in authoring/mutants.md."""
    out = tmp_path / "outcome.json"
    # One nbgrader run per assignment (--workers 1): the suite already keeps every core busy, and a second
    # course would only generate the assignment and grade the control again.
    result = subprocess.run([sys.executable, "-m", "posenc_course.qa.mutants", "--sample", "40", "--workers", "1",
                             "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-3000:]
    outcomes = json.loads(out.read_text())
    assert list(outcomes) == list(GRADED), "every graded assignment, in order"
    for assignment, outcome in outcomes.items():
        killed, counted = outcome["rates"]["all"]
        assert counted >= 30 and killed + len(outcome["survived"]) == counted, assignment
        assert f"{assignment}\nexercise" in result.stdout
    assert result.stdout.index("kill rate") < result.stdout.index(mutants.DETAILS), "the tables come first"

    # --in-process, the authors' quick loop, gives the same verdict as nbgrader on every sampled mutant.
    quick = tmp_path / "in-process.json"
    result = subprocess.run([sys.executable, "-m", "posenc_course.qa.mutants", "--sample", "40", "--in-process",
                             "--json", str(quick)], cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-3000:]
    for assignment, judged in json.loads(quick.read_text()).items():
        graded = outcomes[assignment]
        assert (judged["rates"], judged["killed"], judged["equivalent"]) == \
               (graded["rates"], graded["killed"], graded["equivalent"]), assignment
        assert [s["key"] for s in judged["survived"]] == [s["key"] for s in graded["survived"]], assignment


@pytest.mark.parametrize("assignment", GRADED)
def test_mutants_share_a_submission_only_when_neither_can_change_the_others_score(assignment):
    """graded_together: every mutant in one group; in a group, one mutant per exercise, and none whose
    source names a function of another member's exercise (a sibling call would score it twice)."""
    import dataclasses

    found = mutation.all_mutants(assignment=assignment)
    groups = mutants.graded_together(found, assignment)
    assert sorted(m.key for g in groups for m in g) == sorted(m.key for m in found)
    assert all(len({m.exercise for m in g}) == len(g) for g in groups)
    assert len(groups) < len(found) / 4, "mutants of different exercises are graded together"
    first, second = (next(m for m in found if m.exercise == e) for e in ("ex03", "ex04"))
    calls = dataclasses.replace(second, source=second.source + f"\n# {first.function}(...)")
    assert mutants.graded_together([first, second], assignment) == [[first, second]]
    assert mutants.graded_together([first, calls], assignment) == [[first], [calls]]


def test_every_explained_survivor_is_a_mutant_of_the_reference_with_a_reason():
    """authoring/mutants.md names mutants as make mutants prints them; a stale entry is an error."""
    accepted = mutants.accepted_survivors()
    assert accepted, "authoring/mutants.md explains no survivor"
    stale = set(accepted) - {m.name for a in GRADED for m in mutation.all_mutants(assignment=a)}
    assert not stale, f"authoring/mutants.md explains mutants that no longer exist: {sorted(stale)}"
    assert all(len(reason) > 40 and "```" not in reason for reason in accepted.values())
    assert not [name for name, reason in accepted.items() if "assignment (`" in reason], \
        "a part's title (# The second assignment (`posenc-advanced`)) was read as a survivor's reason"


def test_the_report_counts_each_exercise_and_flags_an_unexplained_survivor():
    found = [m for m in mutation.all_mutants(["ex03"])][:4]
    outcome = mutants.Outcome(killed=found[:2], equivalent=found[2:3], survived=[(found[3], "tests/x.py::test_y")])
    assert mutants.kill_rates(found, outcome) == {"ex03": (2, 3), "all": (2, 3)}
    text = mutants.report(found, outcome, accepted={})
    assert "66.7%" in text and f"## {found[3].name}" in text and "NOT EXPLAINED" in text
    assert f"-{found[3].before}" in text and f"+{found[3].after}" in text, "the survivor's diff is shown"
    assert "NOT EXPLAINED" not in mutants.report(found, outcome, accepted={found[3].name: "a reason"})
