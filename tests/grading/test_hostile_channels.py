"""Every channel from the kernel is capped, and the grade comes only from the judge: real ``nbgrader autograde`` runs
on hostile submissions (issue 42), each otherwise correct.

One class is graded in one run (module fixture), as root and as an unprivileged user (tests/helpers/graders.py), its
grader's own peak memory measured: a later display update that fakes a test cell's score, outputs forged into a
test cell (standard error, an error and a result sent through the kernel's session), an output flood through display
updates, a comm flood, a huge reply to the judge, messages larger than the grader takes sent by hand. Then one
submission that sleeps only when the grader runs its cells again after a crash, and crashes again and again, is
graded alone under a small ``submission_seconds``, and timed. The same attacks on the grader's side alone, without
kernels, are in tests/unit/test_channels.py.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbgrader.api import Gradebook

from hardened_grading.sandbox import probe
from hardened_grading.cells import engine_meta, is_test_cell
from hardened_grading.hooks.unfinished import KERNEL_FOLDER
from posenc_course import report
from posenc_course.course import generate, nbgrader_env, new_course
from posenc_course.layout import NOTEBOOK
from posenc_course.submissions import grade_id, reference_answers

from ..helpers import graders
from ..helpers.grading import Student, answered, assert_scores, prefixed, some, submit

pytestmark = pytest.mark.skipif(probe.sandbox_problem() is not None, reason="no bubblewrap sandbox here")

# ex10's function is called with a function of the tests, so each call runs as a cell of the kernel link's own, at
# the test cell's place. This one answers wrongly (no abs: 4 of the cell's 6 checks pass) and shows a display with an
# id there; the answer cell after it updates that display to the cell's full points. On 766cc86 nbgrader recorded 2
# of 2 points.
WRONG_GAP_THAT_DISPLAYS = '''def shift_invariance_gap(logit_fn, q, k, shift):
    from IPython.display import display
    display({"text/plain": "a display"}, raw=True)
    display({"text/plain": "a display to update later"}, raw=True, display_id="posenc-fake-score")
    positions = np.arange(np.asarray(q).shape[0])
    before = np.asarray(logit_fn(q, k, positions), dtype=np.float64)
    after = np.asarray(logit_fn(q, k, positions + shift), dtype=np.float64)
    return float(np.max(before - after))'''
UPDATE_TO_FULL_MARKS = ('from IPython.display import update_display\n'
                        'update_display({"text/plain": "2"}, raw=True, display_id="posenc-fake-score")')
# A right answer that writes to standard error and sends an error and a result through the kernel's session, as the
# reply to the judge's call is made: on 766cc86 its test cell recorded 0 points, its checks all passing.
FORGING_ROTATION = '''def rotation_2d(angle):
    import sys
    kernel = get_ipython().kernel
    parent = kernel.get_parent()
    print("a student's note", flush=True)  # on stderr it would fail the cell, as in nbgrader (test_foreign_courses)
    kernel.session.send(kernel.iopub_socket, "error", {"ename": "AssertionError", "evalue": "forged", "traceback": []},
                        parent=parent)
    kernel.session.send(kernel.iopub_socket, "execute_result",
                        {"data": {"text/plain": "0"}, "metadata": {}, "execution_count": 1}, parent=parent)
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]], dtype=np.float64)'''
# 25 small displays under one id, then one update of 1 MiB: 25 MiB of outputs on 766cc86.
DISPLAY_FLOOD = ("from IPython.display import display, update_display\n"
                 "for _i in range(25):\n"
                 "    display({'text/plain': 'x'}, raw=True, display_id='posenc-flood')\n"
                 "update_display({'text/plain': 'y' * 2**20}, raw=True, display_id='posenc-flood')")
# 200 comm messages of 1 MiB each, to a comm the grader never opened: nbclient kept every one's state.
COMM_FLOOD = ("from comm import create_comm\n"
              "_comm = create_comm(target_name='posenc-flood', data={})\n"
              "for _i in range(200):\n"
              "    _comm.send({'state': {f'v{_i}': 'z' * 2**20}})")
# One hidden check's call answered with a 72 MB array: a 96 MB reply.
HUGE_REPLY_ROTATION = '''def rotation_2d(angle):
    if angle == 0.7:
        return np.zeros((3000, 3000))
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]], dtype=np.float64)'''

# Three 48 MiB outputs sent by hand through the kernel's session, past every check of the kernel's own: each is over
# the largest message the grader takes (max_reply_kb + 64 KiB), and zmq drops it unread.
RAW_HUGE_MESSAGES = ("import time\n"
                     "_kernel = get_ipython().kernel\n"
                     "for _i in range(3):\n"
                     "    _kernel.session.send(_kernel.iopub_socket, 'display_data', {'data': {'text/plain': 'h' * 48 * 2**20},\n"
                     "                         'metadata': {}}, parent=_kernel.get_parent())\n"
                     "    time.sleep(0.5)")

HOSTILE = [
    Student("reference", answered()),
    Student("display-update-score", prefixed("ex10_needle_attention_by_depth", UPDATE_TO_FULL_MARKS,
                                             {"shift_invariance_gap": WRONG_GAP_THAT_DISPLAYS}), loses=some("ex10")),
    Student("forged-outputs", answered({"rotation_2d": FORGING_ROTATION})),
    Student("display-flood", prefixed("ex02_add_positions", DISPLAY_FLOOD)),
    Student("comm-flood", prefixed("ex03_causal_mask", COMM_FLOOD)),
    Student("huge-reply", answered({"rotation_2d": HUGE_REPLY_ROTATION}), loses=some("ex06"), says="ReplyTooLarge"),
    Student("raw-huge-messages", prefixed("ex04_clipped_relative_bias", RAW_HUGE_MESSAGES), loses=some("ex04"),
            says="is dropped unread"),
]

# Sleeps 15 s, under the 20 s limit of a cell, but only when the grader runs it again after a crash; eight later
# answer cells crash. On 766cc86: eight replays, each 15 s asleep, two minutes with no cell over its limit.
SLEEP_WHEN_RUN_AGAIN = ("import os, time\n"
                        "if os.path.exists('.posenc-ran-once'):\n"
                        "    time.sleep(15)\n"
                        "open('.posenc-ran-once', 'w').close()")
CRASHING = ["ex02_add_positions", "ex03_causal_mask", "ex04_clipped_relative_bias", "ex05_apply_rope",
            "ex06_rotation_2d", "ex07_alibi_slopes", "ex08_interpolate_position_table", "ex09_decode_position_ids"]
BUDGET = 30  #: the replaying submission's submission_seconds


def sleeper_and_crashes(notebook, kit):
    for cell in notebook.cells:
        if grade_id(cell) == "ex01_slowest_period_answer":
            cell.source = SLEEP_WHEN_RUN_AGAIN + "\n" + cell.source
        elif grade_id(cell) in CRASHING:
            cell.source = "import os\nos._exit(1)\n\n" + cell.source
    return notebook


REPLAYER = Student("replay-sleeper", answered(edit=sleeper_and_crashes))

# Runs nbgrader as `python -m nbgrader` does, and writes its own peak memory (ru_maxrss, KiB) to the file named first.
PEAK_MEMORY = """
import atexit, resource, runpy, sys
path = sys.argv.pop(1)
atexit.register(lambda: open(path, "w").write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))
runpy.run_module("nbgrader", run_name="__main__", alter_sys=True)
"""


def autograde(course, *arguments, peak=None, user=None, python=sys.executable):
    """``nbgrader autograde posenc --force ARGUMENTS`` in `course`, as `user` with `python` (tests/helpers/graders.py); return
    its CompletedProcess, with its wall time (``seconds``), the kernels' private folders it left (``folders``) and the
    processes that still name the course (``running``). With `peak`, a file: the grader's own peak memory (KiB) is
    written there."""
    command = graders.grader_command(user, [python, *(["-c", PEAK_MEMORY, str(peak)] if peak else ["-m", "nbgrader"]),
                                            "autograde", "posenc", "--force", *arguments])
    env = graders.grader_env(user, nbgrader_env(PATH=f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}"))
    started = time.monotonic()
    grader = subprocess.Popen(command, cwd=course, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    result = subprocess.CompletedProcess(command, None, *grader.communicate(timeout=1800))
    result.returncode, result.seconds = grader.returncode, time.monotonic() - started
    result.folders = sorted(p.name for p in Path("/tmp").glob(f"{KERNEL_FOLDER}{grader.pid}-*"))
    result.running = processes_naming(course)
    return result


def processes_naming(course, seconds=30):
    """Processes whose command line names `course` (a kernel's sandbox binds it), waited for up to `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        found = []
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if str(course) in command and state != "Z" and int(entry) != os.getpid():
                found.append(f"{entry}: {command[:200]}")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


@pytest.fixture(scope="module", params=graders.GRADERS)
def graded(request):
    """HOSTILE graded in one autograde run (its peak memory kept), then REPLAYER alone under BUDGET seconds: as root,
    and as an unprivileged user (tests/helpers/graders.py)."""
    yield from graders.graded_as(request.param, request, "hostile-channels", grade)


def grade(root, user, python):
    course = new_course(root / "course")
    kit = SimpleNamespace(course=course, release=generate(course),
                          answers=reference_answers(course / "source" / "posenc" / NOTEBOOK))
    for student in HOSTILE:
        submit(student, kit)
    graders.hand_over(root, user)
    peak, replay_peak = course / "peak-memory.txt", course / "replay-peak-memory.txt"
    class_run = autograde(course, peak=peak, user=user, python=python)
    submit(REPLAYER, kit)
    graders.hand_over(root, user)
    replay_run = autograde(course, "--student", REPLAYER.name, f"--ResilientExecute.submission_seconds={BUDGET}",
                           peak=replay_peak, user=user, python=python)
    return SimpleNamespace(course=course, run=class_run, replay=replay_run, peak_mib=int(peak.read_text()) / 1024,
                           replay_peak_mib=int(replay_peak.read_text()) / 1024,
                           scores=report.exercise_scores(course / "gradebook.db"))


def graded_notebook(course, student):
    return nbformat.read(course / "autograded" / student / "posenc" / NOTEBOOK, as_version=4)


def test_the_hostile_class_is_graded_and_nothing_is_left_running(graded):
    for run in (graded.run, graded.replay):
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert run.running == [] and run.folders == []
    assert set(graded.scores) == {s.name for s in HOSTILE} | {REPLAYER.name}


@pytest.mark.parametrize("student", HOSTILE, ids=lambda s: s.name)
def test_each_attack_costs_at_most_its_own_exercise(graded, student):
    """The reference keeps full marks; the forged outputs and the floods cost nothing (the answers are right); the
    faked score and the huge reply cost what the judge's checks say."""
    assert_scores(graded.scores, student.name, student.loses)


@pytest.mark.parametrize("student", HOSTILE, ids=lambda s: s.name)
def test_every_recorded_score_is_the_judges_verdict(graded, student):
    """For every test cell, what nbgrader recorded in the gradebook is the judge's score (the engine's metadata in
    the graded notebook): no display update, forged output or standard error changed it."""
    judged = {grade_id(cell): engine_meta(cell)["score"] for cell in graded_notebook(graded.course, student.name).cells
              if is_test_cell(cell)}
    with Gradebook(f"sqlite:///{graded.course / 'gradebook.db'}") as gradebook:
        submitted = gradebook.find_submission_notebook(NOTEBOOK.removesuffix(".ipynb"), "posenc", student.name)
        recorded = {grade.name: grade.score for grade in submitted.grades if grade.name in judged}
    assert recorded == pytest.approx(judged), {k: (recorded[k], judged[k]) for k in judged if recorded[k] != judged[k]}


def test_a_display_update_does_not_reach_a_test_cell(graded):
    [cell] = [c for c in graded_notebook(graded.course, "display-update-score").cells
              if grade_id(c) == "ex10_shift_invariance_gap_test"]
    assert 0 < engine_meta(cell)["score"] < 2
    assert "a display to update later" not in json.dumps(cell.outputs)


def test_an_output_flood_through_display_updates_is_cut_short(graded):
    size = (graded.course / "autograded" / "display-flood" / "posenc" / NOTEBOOK).stat().st_size
    assert size < 4 * 2**20, size
    assert "was dropped while grading" in json.dumps(graded_notebook(graded.course, "display-flood").cells)


def test_comm_messages_and_huge_replies_do_not_grow_the_graders_memory(graded):
    """200 MiB of comm messages, a 96 MB reply and three 48 MiB messages sent by hand: the grader's peak memory is
    that of a run without them (the replaying submission's, graded alone: about 120 MiB) and at most 128 MiB more,
    which is room for the few capped messages the grader may hold (max_reply_kb + 64 KiB each, QUEUED_MESSAGES
    per channel). On 766cc86 the comm flood alone took a run's peak from 118 to 404 MiB."""
    assert graded.peak_mib < graded.replay_peak_mib + 128, \
        f"the grader's peak memory: {graded.peak_mib:.0f} MiB, {graded.replay_peak_mib:.0f} MiB without the floods"
    flood = graded_notebook(graded.course, "comm-flood")
    assert len(json.dumps(flood.metadata)) < 2 * 2**20, "the comm flood's widget state is not kept in the notebook"


def test_messages_over_the_largest_the_grader_takes_are_dropped_unread(graded):
    """The cell that sent them loses its outputs' end, and so its exercise's points; its notebook says why."""
    student = next(s for s in HOSTILE if s.name == "raw-huge-messages")
    size = (graded.course / "autograded" / student.name / "posenc" / NOTEBOOK).stat().st_size
    assert size < 4 * 2**20, size
    assert student.says in json.dumps(graded_notebook(graded.course, student.name).cells)


def test_a_reply_over_the_cap_fails_its_check_with_a_clear_message(graded):
    [cell] = [c for c in graded_notebook(graded.course, "huge-reply").cells if grade_id(c) == "ex06_rotation_2d_test"]
    failed = [check for check in engine_meta(cell)["checks"] if not check["passed"]]
    assert [check["text"][:22] for check in failed] == ["check_close(rotation_2"]
    assert "ReplyTooLarge" in failed[0]["message"] and "max_reply_kb" in failed[0]["message"]


def test_replays_after_crashes_count_against_the_submissions_time_budget(graded):
    """Eight crashes, each followed by a replay that sleeps 15 s: on 766cc86 the submission took over two minutes.
    Now its run takes the budget, plus the start of nbgrader and the kernel and the end of the run (60 s of room
    for a loaded machine), and the cells it had no time for say why."""
    assert graded.replay.seconds < BUDGET + 60, f"{graded.replay.seconds:.0f} s"
    shown = json.dumps(graded_notebook(graded.course, REPLAYER.name).cells)
    assert "GradingTimeBudget" in shown and "submission_seconds" in shown
    assert "took the 30 s that grading gives one submission" in graded.replay.stdout + graded.replay.stderr
