"""A busy machine costs no student points: a judged test cell is charged the time its code could run, not the time
it waited for a CPU (hardened_grading.cpu_wait), and an endless loop is stopped all the same.

The grader, its kernels and two busy loops share one CPU, so the kernel gets about a third of it. A function whose
first call needs 3 s of CPU then takes about 9 s of wall-clock time, nearly twice the cell's limit of 5 s (the
course's ``Execute.timeout``, set low here so that the test is short). Charged by wall-clock time, as before
cpu_wait, its exercise lost points; charged its CPU's time, it keeps full marks. A function that never returns still
loses its exercise, and says it ran over the limit.
"""

import os
import sys

import nbformat

from posenc_course.course import generate, new_course, nbgrader_env
from posenc_course.report import exercise_scores
from posenc_course.submissions import make_submission, reference_answers, write_submission

from ..helpers import children

LIMIT = 5  #: the course's Execute.timeout here (s)
BURN = 3  #: CPU seconds the slow function's first call needs: under the limit
#: Busy loops beside the grader on its CPU. A limit stretches at most MAX_STRETCH (4) times: the slow call keeps its
#: points while the kernel gets over BURN / (4 * LIMIT) of the CPU, room for about four more busy processes.
HOGS = 2

SLOW_FIRST_CALL = f"""

_sinusoidal_row, _burned = sinusoidal_row, []


def sinusoidal_row(*args, **kwargs):
    if not _burned:  # the first call only: {BURN} s of CPU
        import time
        _burned.append(time.process_time())
        while time.process_time() - _burned[0] < {BURN}:
            pass
    return _sinusoidal_row(*args, **kwargs)
"""
NEVER_RETURNS = "def decode_position_ids(*args, **kwargs):\n    while True:\n        pass\n"


def on_one_cpu(cpu):
    return lambda: os.sched_setaffinity(0, {cpu})


def test_a_slow_but_honest_call_on_a_busy_cpu_keeps_its_points_and_an_endless_one_does_not(tmp_path):
    course = new_course(tmp_path / "course")
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Execute.timeout = {LIMIT}\n")
    release = generate(course)
    answers = reference_answers(course / "source" / "posenc" / "exercises.ipynb")
    answers["ex01_sinusoidal_row"] += SLOW_FIRST_CALL
    [decode] = [grade for grade, code in answers.items() if "def decode_position_ids(" in code]
    answers[decode] = NEVER_RETURNS
    write_submission(make_submission(answers, release_notebook=release), course / "submitted", "busy")

    cpu = min(os.sched_getaffinity(0))
    hogs = [children.popen([sys.executable, "-c", "while True: pass"], preexec_fn=on_one_cpu(cpu))
            for _ in range(HOGS)]
    try:
        graded = children.run([sys.executable, "-m", "nbgrader", "autograde", "posenc"], cwd=course,
                              env=nbgrader_env(), capture_output=True, text=True, timeout=900,
                              preexec_fn=on_one_cpu(cpu))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert graded.returncode == 0, graded.stdout + graded.stderr[-5000:]

    scores = exercise_scores(course / "gradebook.db")["busy"]
    endless = decode.split("_")[0]
    assert scores["ex01"][0] == scores["ex01"][1], f"the slow call cost points on a busy CPU: {scores['ex01']}"
    assert scores[endless][0] < scores[endless][1], "the endless call kept its points"
    assert all(got == most for exercise, (got, most) in scores.items() if exercise not in ("ex01", endless)), scores
    graded_notebook = nbformat.read(str(course / "autograded" / "busy" / "posenc" / "exercises.ipynb"), as_version=4)
    said = "".join(str(cell.get("outputs", "")) for cell in graded_notebook.cells)
    assert f"took over {LIMIT} s, not counting waits for a busy CPU (an endless loop?)" in said
