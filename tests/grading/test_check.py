"""posenc-check, the learner's self-grading command, run as a real console command."""

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

from posenc_course.course import nbgrader_env
from posenc_course.layout import points_by_hand
from posenc_course.submissions import grade_id, make_submission, reference_answers

from ..helpers import children, plain_kernel
from ..helpers.grading import MAX_POINTS, SOURCE, TEST_POINTS
from ..helpers.wrong_solutions import WRONG

TOTAL = sum(MAX_POINTS.values())
# strict_causal fails some checks of the causal_mask test cell of ex03, and nothing else: ex03 keeps
# its other cells' points and a share of that cell's
EX03_AT_LEAST = MAX_POINTS["ex03"] - TEST_POINTS["ex03_causal_mask_test"]

COMMAND = Path(sys.executable).parent / "posenc-check"


def posenc_check(*args):
    return children.run([str(COMMAND), *map(str, args)], capture_output=True, text=True,
                        env=nbgrader_env(), timeout=600)


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("learner")
    answers = reference_answers()
    paths = {"reference": folder / "reference.ipynb", "one_wrong": folder / "one_wrong.ipynb"}
    nbformat.write(make_submission(answers), str(paths["reference"]))
    nbformat.write(make_submission(answers, WRONG["strict_causal"][1]), str(paths["one_wrong"]))
    return paths


def test_reference_gets_full_marks_and_exit_code_0(notebooks):
    result = posenc_check(notebooks["reference"], "--json")
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)
    assert (scores["score"], scores["max_score"]) == (TOTAL, TOTAL)
    assert {ex: (s["score"], s["max_score"]) for ex, s in scores["exercises"].items()} == \
        {ex: (points, points) for ex, points in MAX_POINTS.items()}
    # The reflections, written but graded by hand: said apart, never in the score (nor in the exit code).
    assert scores["by_hand_points"] == points_by_hand(SOURCE) > 0
    checks = [check for s in scores["exercises"].values() for check in s["checks"]]
    assert len(checks) > 200 and all(check["passed"] and check["message"] == "" for check in checks)
    assert "running your notebook" in result.stderr, "progress goes to stderr"


def test_one_wrong_function_is_docked_in_its_exercise_only(notebooks):
    result = posenc_check(notebooks["one_wrong"])
    assert result.returncode == 1, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line[:2] == "ex" and line[2].isdigit()}
    assert set(rows) == set(MAX_POINTS)
    for exercise, points in MAX_POINTS.items():
        score, maximum = map(float, rows[exercise].split()[1].split("/"))
        assert maximum == points
        if exercise == "ex03":
            assert EX03_AT_LEAST <= score < points, rows[exercise]
        else:
            assert score == points, rows[exercise]
    failed = [line.strip() for line in result.stdout.splitlines() if line.startswith("    ")]
    assert failed and all(line.startswith("causal_mask (") for line in failed), failed
    assert f"by hand   {points_by_hand(SOURCE):g} points for the written reflections (c): your instructor grades them, " \
           "posenc-check does not" in result.stdout.splitlines(), result.stdout
    assert "total" in result.stdout


def test_json_of_one_wrong_function_names_each_check(notebooks):
    result = posenc_check(notebooks["one_wrong"], "--json")
    assert result.returncode == 1
    scores = json.loads(result.stdout)
    ex03 = scores["exercises"]["ex03"]
    assert EX03_AT_LEAST <= ex03["score"] < MAX_POINTS["ex03"]
    assert scores["score"] == round(TOTAL - MAX_POINTS["ex03"] + ex03["score"], 2)
    failed = [check for check in ex03["checks"] if not check["passed"]]
    assert failed and all(check["test"] == "ex03_causal_mask_test" and check["message"] for check in failed)
    assert all(check["passed"] for ex, s in scores["exercises"].items() if ex != "ex03" for check in s["checks"])


@pytest.mark.parametrize("content, reason", [
    (None, "no such file"),
    ("this is not JSON", "not a Jupyter notebook"),
    ('{"cells": [', "not a Jupyter notebook"),
    ("", "not a Jupyter notebook"),
    (nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])), "not the exercises notebook of a posenc assignment"),
])
def test_files_that_cannot_be_graded_exit_2_with_a_reason(tmp_path, content, reason):
    path = tmp_path / "exercises.ipynb"
    if content is not None:
        path.write_text(content)
    result = posenc_check(path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert reason in result.stderr, result.stderr


@pytest.mark.parametrize("assignment", ["posenc-advanced", "posenc-current"])
def test_a_notebook_of_a_later_assignment_is_recognised_and_graded(assignment, tmp_path):
    """posenc-check tells the assignments apart by the notebook's cells: the later assignment's reference gets
    full marks against that assignment's own hidden tests, and one wrong function loses points in its exercise
    only."""
    from posenc_course.layout import points_per_exercise, release_notebook, source_notebook

    from ..helpers.leaks import ANSWER_TABLES

    maxima = points_per_exercise(nbformat.read(source_notebook(assignment), as_version=4))
    answers = reference_answers(source_notebook(assignment))
    label, (exercise, functions) = next(iter(ANSWER_TABLES[assignment].WRONG.items()))
    for name, wrong in (("reference", {}), (label, functions)):
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(make_submission(answers, wrong, release_notebook=release_notebook(assignment)), str(path))
        result = posenc_check(path, "--json")
        assert f"the notebook of the assignment {assignment}" in result.stderr, result.stderr
        scores = {ex: s["score"] for ex, s in json.loads(result.stdout)["exercises"].items()}
        assert set(scores) == set(maxima), scores
        for ex, maximum in maxima.items():
            if name == label and ex == exercise:
                assert scores[ex] < maximum and result.returncode == 1, (name, scores)
            else:
                assert scores[ex] == maximum, (name, ex, scores)
        assert result.returncode == (0 if name == "reference" else 1)


# Where a learner stands, at a glance ------------------------------------------------------------

def only(answers, *exercises):
    return {name: code for name, code in answers.items() if name.startswith(exercises)}


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    """Notebooks with one exercise done, of each assignment, and one with exercise 1 started only
    (its concept question answered, its functions still stubs)."""
    from posenc_course.layout import ADVANCED, release_notebook, source_notebook

    folder = tmp_path_factory.mktemp("partial")
    answers = reference_answers()
    notebooks = {
        "one": make_submission(only(answers, "ex01")),
        "advanced_one": make_submission(only(reference_answers(source_notebook(ADVANCED)), "ex01"),
                                        release_notebook=release_notebook(ADVANCED)),
        "started": make_submission(only(answers, "ex01_slowest_period_answer")),
    }
    paths = {}
    for name, notebook in notebooks.items():
        paths[name] = folder / f"{name}.ipynb"
        nbformat.write(notebook, str(paths[name]))
    return paths


def rows_of(output):
    return {line.split()[0]: line for line in output.splitlines() if line[:2] == "ex" and line[2].isdigit()}


@pytest.mark.parametrize("name", ["one", "advanced_one"])
def test_a_notebook_with_one_exercise_done_fits_25_lines(partial, name):
    result = posenc_check(partial[name])
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) <= 25, result.stdout
    rows = rows_of(result.stdout)
    assert "not attempted" not in rows.pop("ex01") and rows, result.stdout
    assert all(row.split()[1].startswith("0/") and row.endswith("not attempted") for row in rows.values()), result.stdout
    assert not [line for line in lines if line.startswith("    ")], "an exercise not attempted lists no checks"
    assert any(line.startswith("total") for line in lines) and lines[-1] == "next: ex02: the first exercise not attempted"


def test_a_started_exercise_lists_3_failed_checks_and_how_many_more(partial):
    result = posenc_check(partial["started"])
    rows = rows_of(result.stdout)
    assert "not attempted" not in rows["ex01"] and rows["ex02"].endswith("not attempted"), result.stdout
    failed = int(rows["ex01"].split()[2])
    assert failed > 3, rows["ex01"]
    under = [line.strip() for line in result.stdout.splitlines() if line.startswith("    ")]
    assert len(under) == 4 and re.match(r"\.\.\. and [1-9]\d* more \(posenc-check started.ipynb --exercise ex01", under[-1]), under
    assert all("not answered yet" in line for line in under[:3]), under
    assert under[0].startswith("sinusoidal_row (lines 2, 4, 6): not run, because an earlier step failed"), \
        "checks of one test cell that failed alike are one line"
    assert result.stdout.splitlines()[-1].startswith("next: ex01")


def test_exercise_checks_one_exercise_and_its_exit_code_judges_it_alone(partial):
    result = posenc_check(partial["one"], "--exercise", "ex01")
    assert result.returncode == 0, result.stdout + result.stderr
    assert set(rows_of(result.stdout)) == {"ex01"}, result.stdout
    assert result.stdout.splitlines()[-1].split()[:2] == ["total", "5/5"], result.stdout
    unknown = posenc_check(partial["one"], "--exercise", "ex11")
    assert unknown.returncode == 2 and "ex01, ex02" in unknown.stderr and unknown.stdout == ""


def test_verbose_prints_every_failed_check(partial):
    result = posenc_check(partial["started"], "-v")
    rows = rows_of(result.stdout)
    lines = result.stdout.splitlines()
    assert rows["ex02"].endswith("not attempted") and "more" not in result.stdout, result.stdout
    ex01 = lines[lines.index(rows["ex01"]) + 1:lines.index(rows["ex02"])]
    assert len(ex01) >= 4 and all(line.startswith("    sinusoidal_") for line in ex01), ex01
    under = [line for line in lines if line.startswith("    ")]
    assert len(under) > 30, "the checks of exercises not attempted too"


# The notebook's own progress cell ---------------------------------------------------------------

def run_all(notebook):
    """Run `notebook` top to bottom in a real kernel as Run All does: a cell's error stops the run unless
    the cell carries the tag raises-exception (nbclient sends stop_on_error=False, as JupyterLab does).
    Return the text the progress cell printed."""
    from posenc_course.authoring.notebook import PROGRESS_ID

    plain_kernel.execute(notebook, timeout=60, allow_errors=False)
    last = notebook.cells[-1]
    assert grade_id(last) == PROGRESS_ID, "the progress cell is the notebook's last"
    return "".join(output.get("text", "") for output in last.outputs)


def progress_rows(text):
    return {line.split()[0]: line for line in text.splitlines() if line[:2] == "ex" and line[2].isdigit()}


@pytest.mark.parametrize("assignment", ["posenc", "posenc-advanced", "posenc-current"])
def test_run_all_reaches_the_progress_cell_of_a_fresh_notebook(assignment):
    from posenc_course.layout import points_per_exercise, release_notebook, source_notebook

    maxima = points_per_exercise(nbformat.read(str(source_notebook(assignment)), as_version=4))
    text = run_all(nbformat.read(str(release_notebook(assignment)), as_version=4))
    rows = progress_rows(text)
    assert set(rows) == set(maxima), text
    for exercise, points in maxima.items():
        assert rows[exercise].split()[1] == f"{points:g}" and rows[exercise].endswith("not attempted"), text
    assert f"worth {sum(maxima.values()):g} points" in text and f"0 of {len(maxima)} exercises pass" in text
    assert "the written reflections (c) are graded by hand, apart" in text, "the progress cell says what it leaves out"
    assert "Next: exercise 1, " in text and ": answer it." in text
    top = nbformat.read(str(release_notebook(assignment)), as_version=4).cells[0].source
    assert f"**{sum(maxima.values()):g} points graded by tests**" in top, "the total is stated at the top"


def test_the_progress_cell_of_a_half_done_notebook_names_what_to_fix_first():
    """ex01 with a mistake its visible tests catch, ex02 right, the rest blank; ex03 started (one answer of its
    own, the others stubs). The progress cell calls not attempted the exercises posenc-check and the class report
    call so (:mod:`hardened_grading.attempts`): every answer still the stub."""
    from posenc_course.student.check import exercise_states, not_attempted

    answers = reference_answers()
    notebook = make_submission(only(answers, "ex01", "ex02", "ex03_causal_mask"), WRONG["concat_layout"][1])
    text = run_all(notebook)
    rows = progress_rows(text)
    assert {ex for ex, row in rows.items() if row.endswith("not attempted")} == not_attempted(
        exercise_states(notebook)) == set(MAX_POINTS) - {"ex01", "ex02", "ex03"}, text
    assert "of 3 test cells pass; ex01_sinusoidal_row_test says:" in rows["ex01"], text
    said = text.split(rows["ex01"] + "\n", 1)[1].splitlines()[0]  # the check's message, on the line under the row
    assert said.strip().startswith("sinusoidal_row(0, 6): interleaved") and " got [" in said, text
    assert rows["ex02"].endswith("passes its visible tests (2 test cells)"), text
    assert "not attempted" not in rows["ex03"], text
    assert "1 of 10 exercises pass" in text
    assert "Next: exercise 1, Sinusoidal rows: fix what its test cell ex01_sinusoidal_row_test says" in text
    # it reveals nothing the student's own run did not show: no expected value of a hidden test
    assert "expected" not in text.split("\n\n", 1)[1].replace(rows["ex01"], "").replace(said, "")


def test_the_progress_cells_are_harmless_where_the_grader_runs_them():
    """The trusted judge runs the setup cells, the tracker and the progress cell included, in a plain
    Python process: they record nothing and raise nothing there."""
    from hardened_grading.judge.setup import setup_namespace
    from posenc_course.layout import GRADED, release_notebook

    for assignment in GRADED:
        namespace = setup_namespace(nbformat.read(str(release_notebook(assignment)), as_version=4))
        assert callable(namespace["show_progress"]) and namespace.get("_posenc_ran") == {}


def test_a_prepared_assignment_is_kept_and_used_again_only_whole(notebooks, tmp_path):
    """The gradebook that generate_assignment made is kept (a third of a run) and used by the next run, with the
    same verdicts; a kept file that is not a whole gradebook is passed by, and made again."""
    env = {**nbgrader_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def check():
        result = children.run([str(COMMAND), str(notebooks["one_wrong"]), "--json"], capture_output=True,
                              text=True, env=env, timeout=600)
        assert result.returncode == 1, result.stderr
        return json.loads(result.stdout), "as an earlier run prepared it" in result.stderr

    first, reused = check()
    assert not reused and first["score"] < first["max_score"]
    [kept] = (tmp_path / "cache" / "posenc").glob("posenc-*.db")
    assert check() == (first, True)
    kept.write_bytes(b"not a gradebook")
    assert check() == (first, False)
    assert check() == (first, True), "the gradebook made again is kept"
