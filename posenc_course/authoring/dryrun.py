"""Run every test cell of a notebook once, through the real judge, against the reference answers.

``make notebook`` does this after building the source notebook (:mod:`posenc_course.authoring.notebook`), in
this process and in well under a second: the judge's kernel side (:mod:`hardened_grading.judge.agent`) answers
from a namespace made by the notebook's setup and answer cells instead of from a kernel. So a test
that fails against the reference, or that hands an answer something the judge cannot carry to a
kernel (an ``np.random.Generator``, an open file: anything but numbers, strings, arrays, lists,
tuples, dicts and functions), is reported at its line of the spec before any student is graded.
"""

import json
import re

from hardened_grading.judge import agent
from hardened_grading.judge import judge
from hardened_grading.judge import setup as judge_setup
from hardened_grading.judge.checks import score_of
from hardened_grading.judge.messages import elide
from ..layout import grade_id, is_test_cell


class CannotCarry(Exception):
    """A test passes an answer function something that would reach the kernel as an opaque stand-in."""


def _opaque_arguments(request):
    """``(position, type name)`` of each argument of a call request that would arrive opaque."""
    found = []

    def walk(data, position):
        if isinstance(data, dict):
            if data.get("t") == "opaque":
                found.append((position, data.get("type", "?")))
            for value in data.get("v", []) if isinstance(data.get("v"), list) else []:
                walk(value, position)
        elif isinstance(data, list):
            for value in data:
                walk(value, position)

    for number, argument in enumerate(request.get("args", []), 1):
        walk(argument, f"argument {number}")
    for key, value in request.get("kwargs", []):
        walk(value, f"argument {key}=")
    return found


def run_against_reference(notebook):
    """``{grade_id: error or None}``: each test cell judged against the notebook's reference answers."""
    return {name: error for name, (error, _) in judged(notebook).items()}


def scores_against_reference(notebook, graded=lambda grade_id: True):
    """``{grade_id: (score, points)}``: each test cell's partial credit judged against the notebook's reference
    answers, weighed as the grader weighs its checks (``# weight N``: :func:`hardened_grading.judge.checks.score_of`);
    only the cells whose grade id `graded` accepts."""
    verdicts = judged(notebook, graded)
    scores = {}
    for cell in notebook.cells:
        if is_test_cell(cell) and graded(grade_id(cell)):
            error, checks = verdicts[grade_id(cell)]
            points = float(cell.metadata["nbgrader"].get("points", 0))
            scores[grade_id(cell)] = (score_of(checks, points) if checks else 0.0 if error else points, points)
    return scores


def judged(notebook, graded=lambda grade_id: True):
    """``{grade_id: (error or None, [Check])}``: each test cell (whose grade id `graded` accepts) judged against the
    notebook's reference answers, with its checks as they ran (:class:`hardened_grading.judge.checks.Check`)."""
    setup = judge_setup.setup_namespace(notebook)
    kernel_namespace = judge_setup.reference_namespace(notebook, setup)
    functions = judge_setup.answer_functions(notebook)

    def ask(request):
        opaque = _opaque_arguments(request)
        if opaque:
            where, type_name = opaque[0]
            raise CannotCarry(f"{request['name']}(...): {where} is a {type_name}, which the judge cannot carry to "
                              "the student's kernel; pass numbers, strings, arrays, lists, tuples, dicts or functions")
        return json.loads(agent.answer_text(json.dumps(request), kernel_namespace, the_judge.answer_callback))

    verdicts = {}
    for cell in notebook.cells:
        if is_test_cell(cell) and graded(grade_id(cell)):
            the_judge = judge.Judge(ask)
            _, error = the_judge.run(cell.source, setup, judge_setup.cell_label(grade_id(cell)), functions)
            verdicts[grade_id(cell)] = (error, the_judge.checks)
    return verdicts


def _test_line(error, label):
    """The line of the test cell that the error's traceback ends in (1 if none)."""
    lines = re.findall(rf'File "{re.escape(label)}", line (\d+)', "".join(error.get("traceback", [])))
    return int(lines[-1]) if lines else 1


def problems(notebook, fence_lines, spec_name):
    """``FILE:LINE: ...`` for each test cell that fails against the reference; `fence_lines` maps a
    grade id to the spec line of its fence."""
    found = []
    for name, error in run_against_reference(notebook).items():
        if error is None:
            continue
        line = fence_lines.get(name, 0) + _test_line(error, judge_setup.cell_label(name))
        what = "cannot be run" if error["ename"] == "CannotCarry" else "fails against the reference answers"
        found.append(f"{spec_name}:{line}: test cell {name} {what}: {error['ename']}: "
                     + elide(error["evalue"], 400))
    return found
