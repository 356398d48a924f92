"""posenc-check, the learner's self-grading command, run as a real console command."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from posenc_course.course import nbgrader_env
from posenc_course.submissions import make_submission, reference_answers

from .test_grading import MAX_POINTS, TEST_POINTS

TOTAL = sum(MAX_POINTS.values())
# strict_causal fails the causal_mask test cell of ex03 and nothing else
EX03_ONE_WRONG = MAX_POINTS["ex03"] - TEST_POINTS["ex03_causal_mask_test"]
from .wrong_solutions import WRONG

COMMAND = Path(sys.executable).parent / "posenc-check"


def posenc_check(*args):
    return subprocess.run([str(COMMAND), *map(str, args)], capture_output=True, text=True,
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
    assert json.loads(result.stdout) == {
        "score": TOTAL, "max_score": TOTAL,
        "exercises": {ex: {"score": points, "max_score": points} for ex, points in MAX_POINTS.items()},
    }
    assert "running your notebook" in result.stderr, "progress goes to stderr"


def test_one_wrong_function_is_docked_in_its_exercise_only(notebooks):
    result = posenc_check(notebooks["one_wrong"])
    assert result.returncode == 1, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line[:2] == "ex" and line[2].isdigit()}
    assert set(rows) == set(MAX_POINTS)
    for exercise, points in MAX_POINTS.items():
        score = rows[exercise].split()[1]
        if exercise == "ex03":
            assert score == f"{EX03_ONE_WRONG:g}/{points:g}", rows[exercise]
            assert "[ex03_causal_mask_test] AssertionError" in rows[exercise], rows[exercise]
        else:
            assert score == f"{points:g}/{points:g}" and "Error" not in rows[exercise], rows[exercise]
    lost = MAX_POINTS["ex03"] - EX03_ONE_WRONG
    assert "total" in result.stdout and f"{TOTAL - lost:g}/{TOTAL:g}" in result.stdout


def test_json_of_one_wrong_function(notebooks):
    result = posenc_check(notebooks["one_wrong"], "--json")
    assert result.returncode == 1
    scores = json.loads(result.stdout)
    assert scores["score"] == TOTAL - (MAX_POINTS["ex03"] - EX03_ONE_WRONG)
    assert scores["exercises"]["ex03"] == {"score": EX03_ONE_WRONG, "max_score": MAX_POINTS["ex03"]}


@pytest.mark.parametrize("content, reason", [
    (None, "no such file"),
    ("this is not JSON", "not a Jupyter notebook"),
    ('{"cells": [', "not a Jupyter notebook"),
    ("", "not a Jupyter notebook"),
    (nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])), "not the posenc exercises notebook"),
])
def test_files_that_cannot_be_graded_exit_2_with_a_reason(tmp_path, content, reason):
    path = tmp_path / "exercises.ipynb"
    if content is not None:
        path.write_text(content)
    result = posenc_check(path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert reason in result.stderr, result.stderr
