"""Runs of the parallel grader (``posenc-grade``): interrupted, killed, a worker lost, a part of the class
selected, bad options, progress and the summary.

Each test is one scenario in a temporary course directory of its own, with real submissions from
:mod:`tests.helpers.grading`'s table and the real command in a subprocess, so the tests share nothing and
``make test`` spreads them over its workers (``tests/conftest.py``: SPREAD_MODULES). That parallel
grading scores as serial ``nbgrader autograde`` does, on SQLite and PostgreSQL, is
:mod:`tests.grading.test_grade_class`.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hardened_grading.class_grading import progress as class_grading_progress
from hardened_grading.class_grading import students as class_grading_students
from hardened_grading.class_grading import worker as class_grading_worker
from hardened_grading.sandbox.ahead import STAGING
from hardened_grading.hooks.submission import GRADED_MARKER
from hardened_grading.processes import ended
from posenc_course.course import nbgrader_env, new_course

from ..helpers import children
from ..helpers.grade_class import SMALL_CLASS, assert_expected_scores, db_url_of, grades, make_course, posenc_grade
from ..helpers.grading import STUDENTS


def children_of(pid):
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
        except (OSError, ValueError, IndexError):
            pass
    return found


def is_worker(pid):
    """Whether `pid` is a grading worker (a process of multiprocessing's spawn start method)."""
    try:
        return "spawn_main" in open(f"/proc/{pid}/cmdline").read()
    except OSError:
        return False


def kernels_of(course):
    """The grading kernels working in `course` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and "hardened_grading.sandbox.launcher" in open(f"/proc/{entry}/cmdline").read() \
                    and str(course) in os.readlink(f"/proc/{entry}/cwd"):
                found.append(entry)
        except OSError:
            pass
    return found


def descendants_of(pid):
    """The processes below `pid`: its children, theirs, and so on."""
    found = children_of(pid)
    return found + [below for child in found for below in descendants_of(child)]


#: The numbers of the system calls that ``time.sleep`` makes on x86_64 and arm64 (nanosleep, clock_nanosleep).
SLEEP_CALLS = {"x86_64": {"35", "230"}, "aarch64": {"101", "115"}}


def in_a_sleep(pid):
    """Whether the process `pid`'s main thread is in ``time.sleep`` (the system call it is in, from /proc)."""
    try:
        call = open(f"/proc/{pid}/syscall").read().split()[:1]
    except OSError:
        return False
    return bool(call) and call[0] in SLEEP_CALLS.get(os.uname().machine, set())


def gone(pids, seconds=30):
    """Wait until every process of `pids` has ended (a zombie has: hardened_grading.processes.ended); say if so."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not all(map(ended, pids)):
        time.sleep(0.1)
    return all(map(ended, pids))


def sigkill_the_command(run):
    run.send_signal(signal.SIGKILL)


def ctrl_c(run):
    os.killpg(run.pid, signal.SIGINT)  # as a terminal sends it: to the command and all its workers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("interrupt, exit_code", [(sigkill_the_command, -signal.SIGKILL), (ctrl_c, 130)],
                         ids=["killed", "ctrl-c"])
def test_an_interrupted_parallel_run_is_finished_by_running_it_again(tmp_path, interrupt, exit_code):
    """Interrupt the command while a worker is in a cell that sleeps for the whole 20 s cell timeout: its
    workers and their kernels stop at once (they do not finish the submission), and the same command
    again grades the rest, skips what was graded, and gives every student the expected scores."""
    class_ = SMALL_CLASS + [STUDENTS["hostile-sleep"]]
    course = make_course(tmp_path / "course", class_)
    # As in a terminal: its own process group, and SIGINT not ignored (a shell without job control, as CI's
    # may be, starts background commands with SIGINT ignored, and that is inherited).
    run = children.popen([sys.executable, "-m", "posenc_course.instructor.grade", "--jobs", "2"], cwd=course,
                         env=nbgrader_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    sleeper = course / "autograded" / "hostile-sleep" / "posenc" / "exercises.ipynb"
    deadline = time.monotonic() + 300
    while not sleeper.exists():  # its notebook is sanitized: it is about to run
        assert run.poll() is None and time.monotonic() < deadline, "posenc-grade ended before it could be interrupted"
        time.sleep(0.05)
    while not any(in_a_sleep(pid) for kernel in kernels_of(course) for pid in descendants_of(int(kernel))):
        assert run.poll() is None and time.monotonic() < deadline, "the sleeping cell never ran"
        time.sleep(0.05)  # then it is in its sleeping cell (ex09), 20 s from its timeout
    workers = children_of(run.pid)
    killed = time.monotonic()
    interrupt(run)
    _, err = run.communicate(timeout=60)
    assert run.returncode == exit_code, err[-3000:]
    if interrupt is ctrl_c:
        assert "interrupted after" in err and "Run the same command again to finish" in err, err[-3000:]
    # They stop in about 3 s (an idle machine); finishing the sleeping submission would take over 20.
    assert workers and gone(workers, seconds=12), "a worker outlived the interrupted posenc-grade"
    assert gone(kernels_of(course), seconds=5), "a grading kernel outlived the interrupted posenc-grade"
    assert time.monotonic() - killed < 16, "the workers finished their submissions instead of stopping"
    assert not (sleeper.parent / GRADED_MARKER).exists()
    finished = len(list(course.glob(f"autograded/*/posenc/{GRADED_MARKER}")))
    assert finished < len(class_), "the run had finished before it was killed"

    result = posenc_grade(course, "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr[-5000:]
    assert f"skipped: {finished} already graded" in result.stdout, result.stdout
    assert f"graded:  {len(class_) - finished}" in result.stdout, result.stdout
    assert_expected_scores(db_url_of(course), class_)
    assert grades(db_url_of(course))[1] == len(class_), "one submission row per student"


def processes_of(course):
    """``{pid: command line}`` of every process working for `course`: in it (its working folder), or naming
    it (bwrap's binds). The grading command's workers, kernel launchers, bwrap and the kernels inside."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = open(f"/proc/{entry}/cmdline").read().replace("\0", " ")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if cmdline and (cwd == str(course) or cwd.startswith(f"{course}/") or str(course) in cmdline):
            found[int(entry)] = cmdline
    return found


def kernel_launcher_of(course, ahead=False):
    """The pid of a grading kernel that is starting in `course` (the launcher, before it becomes bwrap), or None;
    `ahead`: only one started ahead, for the next submission (its folder is a staging folder)."""
    for pid, cmdline in processes_of(course).items():
        if "hardened_grading.sandbox.launcher" in cmdline and not cmdline.startswith("bwrap"):
            try:
                staging = f"/autograded/{STAGING}" in os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
            if staging or not ahead:
                return pid
    return None


def nothing_left(course, seconds):
    """Wait until no process works for `course`; return what is left after `seconds`."""
    deadline = time.monotonic() + seconds
    while processes_of(course) and time.monotonic() < deadline:
        time.sleep(0.1)
    return processes_of(course)


GRADERS = {"nbgrader autograde": ["-m", "nbgrader", "autograde", "posenc"],
           "posenc-grade": ["-m", "posenc_course.instructor.grade", "--jobs", "2"],
           # one worker, three students: killed while the second one's kernel starts ahead
           "posenc-grade, a kernel started ahead": ["-m", "posenc_course.instructor.grade", "--jobs", "1"]}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("command", GRADERS)
def test_a_grader_killed_while_a_kernel_starts_leaves_nothing_running(tmp_path, command):
    """SIGKILL the grading command at the worst moment, while a kernel is starting (its launcher has not yet
    become the sandbox), the next submission's kernel started ahead included: every process it started ends
    (workers, launchers, bwrap, kernels), none is left waiting for a grader that is gone, and the same command
    again grades the class right, and leaves no staging folder."""
    ahead = "ahead" in command
    class_ = [STUDENTS[name] for name in ("reference", "wrong-strict_causal", *(["blank"] if ahead else []))]
    course = make_course(tmp_path / "course", class_)
    run = children.popen([sys.executable, *GRADERS[command]], cwd=course, env=nbgrader_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while kernel_launcher_of(course, ahead) is None:
        assert run.poll() is None and time.monotonic() < deadline, f"{command} ended before a kernel started"
        time.sleep(0.01)
    graders = set(processes_of(course))  # the command and its workers: each names its kernels' folders
    run.send_signal(signal.SIGKILL)
    run.wait()
    # Left behind, a kernel would wait for its grader forever; ended, they go in well under a second. 60 s
    # is room for a loaded machine (and for a worker's stop backstop, class_grading_worker.STOP_GRACE).
    left = nothing_left(course, seconds=60)
    assert not left, f"processes outlived the killed {command}: {left}"

    result = children.run([sys.executable, *GRADERS[command]], cwd=course, env=nbgrader_env(),
                          capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert_expected_scores(db_url_of(course), class_)
    assert not nothing_left(course, seconds=60), "a finished run left processes behind"
    assert not orphaned_kernel_folders(graders), "a killed grader's kernel folders outlived the next run"
    assert not list(course.glob(f"autograded/{STAGING}*")), "a killed worker's staging folder outlived the next run"


def orphaned_kernel_folders(graders):
    """The kernels' private folders (``hardened-grading-kernel-PID-*``) of the graders of pids `graders` that are
    gone (other tests, grading at the same time, have folders of their own)."""
    from hardened_grading.hooks.unfinished import KERNEL_FOLDER

    owners = {folder: folder.name.removeprefix(KERNEL_FOLDER).partition("-")[0]
              for folder in Path(tempfile.gettempdir()).glob(f"{KERNEL_FOLDER}*-*")}
    return [folder.name for folder, owner in owners.items()
            if owner.isdigit() and int(owner) in graders and ended(owner)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_that_dies_costs_only_its_own_submission(tmp_path):
    """A worker killed while grading: its submission is reported as failed, and why; a new worker grades
    the rest; the next run grades that one submission and touches no other."""
    course = make_course(tmp_path / "course", SMALL_CLASS)
    run = children.popen([sys.executable, "-m", "posenc_course.instructor.grade", "--jobs", "2"], cwd=course,
                         env=nbgrader_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while True:  # a worker grading: it has a kernel (the spawn start method's helper, and a worker still
        # starting, have no child). Only workers: the command's sandbox probe, a bwrap with a child of its
        # own, is not one (killing it, on a busy machine, made the command refuse to grade)
        grading = [pid for pid in children_of(run.pid) if children_of(pid) and is_worker(pid)]
        if grading:
            break
        assert run.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    victim = grading[0]
    os.kill(victim, signal.SIGKILL)
    out, err = run.communicate(timeout=600)
    assert run.returncode == 1, out + err[-3000:]
    assert "failed:  1" in out and "its grading process died (killed by signal 9)" in out, out
    [failed] = [line.split(":")[0].strip() for line in out.splitlines() if "grading process died" in line]
    assert failed in {s.name for s in SMALL_CLASS}
    assert gone(kernels_of(course)), "the dead worker's kernel outlived it"
    assert f"graded:  {len(SMALL_CLASS) - 1}" in out, out
    before = {s.name: (course / "autograded" / s.name / "posenc" / GRADED_MARKER).stat().st_mtime_ns
              for s in SMALL_CLASS if s.name != failed}

    result = posenc_grade(course, "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "graded:  1" in result.stdout and f"skipped: {len(SMALL_CLASS) - 1}" in result.stdout, result.stdout
    assert_expected_scores(db_url_of(course), SMALL_CLASS)
    after = {name: (course / "autograded" / name / "posenc" / GRADED_MARKER).stat().st_mtime_ns for name in before}
    assert after == before, "the other students' graded notebooks were touched"


def test_force_and_students_select_what_is_graded(tmp_path):
    """--student takes ids, globs and comma-separated lists; --force grades again; others are left alone."""
    course = make_course(tmp_path / "course", SMALL_CLASS)
    result = posenc_grade(course, "--jobs", "2", "--student", "wrong-*", "--student", "reference,blank")
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    graded = {p.parents[1].name for p in course.glob(f"autograded/*/posenc/{GRADED_MARKER}")}
    assert graded == {"wrong-strict_causal", "wrong-rope_half_split", "reference", "blank"}
    again = posenc_grade(course, "--jobs", "1", "--student", "reference", "--force")
    assert again.returncode == 0 and "graded:  1" in again.stdout, again.stdout + again.stderr[-3000:]


# The command's own rules ---------------------------------------------------------------------------

@given(st.lists(st.text("abcxyz0123456789", min_size=1, max_size=6), unique=True, max_size=40),
       st.integers(1, 12))
def test_shards_split_the_class_into_equal_disjoint_parts(students, count):
    parts = [class_grading_students.shard_of(students, index, count) for index in range(count)]
    assert sorted(s for part in parts for s in part) == sorted(students)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert parts == [class_grading_students.shard_of(list(reversed(students)), i, count) for i in range(count)], \
        "the same parts whatever order the class is listed in"


@pytest.mark.parametrize("args, says", [
    (["--shard", "3/3"], "INDEX counts from 0 and is below COUNT"),
    (["--shard", "first"], "give it as INDEX/COUNT"),
    (["--jobs", "0"], "--jobs 0: give 1 or more"),
    (["--student", "nobody"], "no submission of posenc"),
    (["theory"], "no submission of theory"),
])
def test_bad_options_say_what_to_do(tmp_path, args, says):
    course = new_course(tmp_path / "course")
    (course / "submitted" / "s1" / "posenc").mkdir(parents=True)
    result = posenc_grade(course, *args)
    assert result.returncode == 2 and says in result.stderr, result.stderr


def test_a_gradebook_without_the_assignment_says_to_generate_it(tmp_path):
    course = new_course(tmp_path / "course")
    (course / "submitted" / "s1" / "posenc").mkdir(parents=True)
    result = posenc_grade(course)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "no assignment 'posenc': run `nbgrader generate_assignment posenc`" in result.stderr, result.stderr


def test_a_postgresql_server_that_is_down_is_a_clear_error(tmp_path):
    course = new_course(tmp_path / "course")
    (course / "submitted" / "s1" / "posenc").mkdir(parents=True)
    result = posenc_grade(course, "--db-url", f"postgresql://nobody:secret@/gradebook?host={tmp_path}")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "cannot open the gradebook postgresql://nobody:***@/gradebook" in result.stderr, result.stderr
    assert "secret" not in result.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux pseudo-terminal")
def test_on_a_terminal_a_progress_bar_shows_count_rate_and_time_left(tmp_path):
    """Run on a terminal (a pseudo-terminal of 100 columns), the command draws tqdm's bar instead of one
    line per submission."""
    import fcntl
    import pty
    import struct
    import termios

    course = make_course(tmp_path / "course", [STUDENTS["reference"], STUDENTS["blank"]])
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    run = children.popen([sys.executable, "-m", "posenc_course.instructor.grade", "--jobs", "2"], cwd=course,
                         env=nbgrader_env(), stdin=follower, stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    run.wait(timeout=300)
    os.close(leader)
    text = shown.decode(errors="replace")
    assert run.returncode == 0, text[-3000:]
    assert "grading: 100%" in text and "2/2 [" in text and "submission" in text, text[-3000:]
    assert "\r" in text, "a bar redraws its line"
    assert "] reference: graded in" not in text, "no plain line per submission on a terminal"


# The summary names what went wrong -----------------------------------------------------------------

def test_the_summary_names_unreadable_timed_out_and_crashed_submissions(tmp_path):
    """A file that is not a notebook, a cell that sleeps past the time limit (5 s here) and one that kills its
    kernel: each is graded, and the summary names it, with the cell and why; the blank is not named. Run
    again, everything is skipped: no rate, no time left, for submissions that were not graded."""
    class_ = [STUDENTS[name] for name in ("blank", "bad-binary", "hostile-sleep", "hostile-exit")]
    course = make_course(tmp_path / "course", class_)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write("\nc.Execute.timeout = 5\n")
    result = posenc_grade(course, "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr[-5000:]
    out = result.stdout
    assert "graded:  4" in out and "3 of them graded with a problem" in out, out
    named = {line.split(":")[0].strip(): line for line in out.splitlines() if line.startswith("    ") and ": " in line}
    assert "unreadable: the whole file" in named["bad-binary"] and "UnicodeDecodeError" in named["bad-binary"], out
    assert "timed out: cell ex09_decode_position_ids (ex09)" in named["hostile-sleep"], out
    assert "ran over the time limit" in named["hostile-sleep"], out
    assert "crashed the kernel: cell ex04_clipped_relative_bias (ex04)" in named["hostile-exit"], out
    assert "blank" not in named, out
    assert "SAWarning" not in result.stderr and "KeyboardInterrupt caught" not in result.stderr

    again = posenc_grade(course, "--jobs", "2")
    assert again.returncode == 0, again.stdout + again.stderr[-3000:]
    lines = [line for line in again.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == 4 and all(line.endswith(": already graded, skipped") for line in lines), again.stderr
    assert "skipped: 4" in again.stdout and "per second" not in again.stdout, again.stdout


def test_the_rate_and_time_left_are_of_graded_submissions_only():
    """Skipped submissions take no time: they neither raise the rate nor shorten the time left."""
    import io

    stream = io.StringIO()
    progress = class_grading_progress.Progress(4, stream=stream, to_skip=2)
    progress.started -= 10  # 10 s ago
    progress(class_grading_worker.Outcome("s1", "skipped", 0.0))
    progress(class_grading_worker.Outcome("s2", "skipped", 0.0))
    progress(class_grading_worker.Outcome("s3", "graded", 10.0, problems=(("timed out", "cell ex09_x (ex09)", "why"),)))
    lines = stream.getvalue().splitlines()
    assert lines[:2] == ["[1/4] s1: already graded, skipped", "[2/4] s2: already graded, skipped"]
    assert "(0.10/s, 10 s left)" in lines[2] and "timed out: cell ex09_x (ex09)" in lines[2], lines[2]
    text = class_grading_progress.summary([class_grading_worker.Outcome("s1", "skipped", 0.0),
                                class_grading_worker.Outcome("s3", "graded", 10.0, problems=(("timed out", "cell c", "why"),))],
                               20.0, 2, "log", "posenc")
    assert "0.05 graded per second" in text and "    s3: timed out: cell c: why" in text, text


def test_the_grading_kernel_does_not_log_the_grader_s_own_interrupts(tmp_path):
    """An interrupt that lands while the kernel handles a message, not a cell (as jupyter_client's shutdown
    sends one), makes ipykernel log 'ERROR | KeyboardInterrupt caught in kernel.': not from the grading kernel."""
    from jupyter_client import KernelManager

    from hardened_grading.sandbox import kernelspec

    manager = KernelManager(kernel_spec_manager=kernelspec.GradingKernelSpecManager(), kernel_name=kernelspec.KERNEL_NAME)
    with open(tmp_path / "kernel.log", "w") as log:
        manager.start_kernel(extra_arguments=["--sandbox=off"], stdout=log, stderr=log, cwd=str(tmp_path))
    client = manager.client()
    try:
        client.start_channels()
        client.wait_for_ready(timeout=60)
        client.execute_interactive("import time\nget_ipython().kernel.comm_manager.register_target("
                                   "'nap', lambda comm, msg: time.sleep(5))", timeout=60)
        client.shell_channel.send(client.session.msg("comm_open", {"comm_id": "c", "target_name": "nap", "data": {}}))
        time.sleep(1.5)  # in the comm handler
        manager.interrupt_kernel()
        assert client.execute_interactive("1", timeout=60)["content"]["status"] == "ok"
    finally:
        client.stop_channels()
        manager.shutdown_kernel()
    logged = (tmp_path / "kernel.log").read_text()
    assert "KeyboardInterrupt caught in kernel" not in logged, logged
