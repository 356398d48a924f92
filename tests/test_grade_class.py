"""Grading a class in parallel (``posenc-grade``): the same scores as serial ``nbgrader autograde``.

Each test is one scenario in a temporary course directory, in the shape of nbgrader's own test suite:
real submissions (right, wrong, hostile and broken ones, from :mod:`tests.test_grading`'s table), the
real command in a subprocess, and assertions on the gradebook, SQLite or a real PostgreSQL server.

The PostgreSQL server is Debian's ``postgresql`` (``make install`` installs it as root), started here
with ``initdb`` and ``pg_ctl`` in a temporary folder, on a Unix socket only, and stopped afterwards.
Without it, those tests are skipped and say why.
"""

import glob
import multiprocessing
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hardened_grading import grade_class
from posenc_course.course import generate, load_config, nbgrader_env, new_course, run_nbgrader
from hardened_grading.grading import GRADED_MARKER
from posenc_course.layout import ASSIGNMENT
from posenc_course.submissions import reference_answers

from .test_grading import STUDENTS, assert_scores, submit

# Right, wrong, partly right, blank, tampered, hostile (each of its own kind) and unreadable submissions.
CLASS = [STUDENTS[name] for name in (
    "reference", "blank", "partial-one-check", "wrong-rope_half_split", "wrong-strict_causal", "alt-ex05",
    "tamper-deleted-wrong", "hostile-exit", "hostile-segfault", "hostile-call-memory", "hostile-huge-array",
    "peek-gradebook", "fake-checks", "malformed", "bad-binary", "renamed")]
SMALL_CLASS = [STUDENTS[name] for name in (
    "reference", "wrong-strict_causal", "blank", "wrong-rope_half_split", "alt-ex05", "hostile-exit")]


def make_course(folder, students, db_url=None):
    """A course in `folder` with `students`' submissions and, when given, its gradebook at `db_url`
    (set in nbgrader_config.py, as an instructor sets it)."""
    course = new_course(folder)
    if db_url:
        with open(course / "nbgrader_config.py", "a") as config:
            config.write(f"\nc.CourseDirectory.db_url = {db_url!r}\n")
    kit = SimpleNamespace(course=course, release=generate(course),
                          answers=reference_answers(course / "source" / "posenc" / "exercises.ipynb"))
    for student in students:
        submit(student, kit)
    return course


def db_url_of(course):
    return grade_class.gradebook_url(load_config(course), course)


def grades(db_url):
    """``{student: {grade cell: score}}`` of every graded submission in the gradebook at `db_url`, and the
    number of submission rows."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url, "posenc") as gradebook:
        submissions = gradebook.assignment_submissions("posenc")
        scores = {s.student.id: {g.name: g.score for n in s.notebooks for g in n.grades} for s in submissions}
        return scores, len(submissions)


def exercise_scores(db_url):
    """``{student: {exercise: (score, max_score)}}``, as :func:`posenc_course.report.exercise_scores` gives it."""
    from posenc_course import report

    return report.exercise_scores(db_url)


def posenc_grade(course, *args, timeout=900):
    return subprocess.run([sys.executable, "-m", "posenc_course.grade", *args], cwd=course,
                          env=nbgrader_env(), capture_output=True, text=True, timeout=timeout)


def assert_expected_scores(db_url, students):
    scores = exercise_scores(db_url)
    assert set(scores) == {student.name for student in students}
    for student in students:
        assert_scores(scores, student.name, student.loses)


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The class graded by plain ``nbgrader autograde``, one submission after another: the reference."""
    course = make_course(tmp_path_factory.mktemp("serial") / "course", CLASS)
    result = run_nbgrader(course, "autograde", "posenc")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    scores, rows = grades(db_url_of(course))
    assert rows == len(CLASS) == len(scores)
    return scores


# A PostgreSQL server of the test's own -------------------------------------------------------------

def postgresql_programs():
    """The folder of PostgreSQL's server programs (Debian keeps them off PATH), or None."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(versions[-1]).parent if versions else None


@pytest.fixture(scope="module")
def postgresql():
    """``new_database()`` -> the URL of a new, empty database on a PostgreSQL server started for this
    module; the server is stopped and its folder removed at the end."""
    programs = postgresql_programs()
    if programs is None:
        pytest.skip("PostgreSQL is not installed (Debian: sudo apt-get install postgresql; "
                    "`make install` does it as root)")
    user = {}
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: the server runs as Debian's postgres user
        try:
            user = {"user": pwd.getpwnam("postgres").pw_uid}
        except KeyError:
            pytest.skip("running as root, and there is no 'postgres' user to run the PostgreSQL server as")
    folder = Path(tempfile.mkdtemp(prefix="posenc-pg-"))
    folder.chmod(0o755)
    if user:
        os.chown(folder, user["user"], -1)

    def server(program, *args):
        return subprocess.run([str(programs / program), *args], capture_output=True, text=True, timeout=120,
                              check=True, cwd=folder, **user)

    try:
        server("initdb", "-D", str(folder / "data"), "-U", "posenc", "--auth=trust", "-E", "UTF8")
        server("pg_ctl", "-D", str(folder / "data"), "-l", str(folder / "server.log"), "-w", "start",
               "-o", f"-k {folder} -c listen_addresses='' -c max_connections=100")
        count = iter(range(1000))

        def new_database():
            name = f"gradebook{next(count)}"
            server("createdb", "-h", str(folder), "-U", "posenc", name)
            return f"postgresql://posenc@/{name}?host={folder}"

        yield new_database
    finally:
        subprocess.run([str(programs / "pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "-w", "stop"],
                       capture_output=True, cwd=folder, timeout=120, **user)
        shutil.rmtree(folder, ignore_errors=True)


def database(backend, request):
    return request.getfixturevalue("postgresql")() if backend == "postgresql" else None


# The scenarios -------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_parallel_scores_equal_serial_scores(serial, backend, request, tmp_path):
    """Two workers on one gradebook give every student the very scores of a serial run, hostile and broken
    submissions included; one line per submission when the output is not a terminal; a summary."""
    course = make_course(tmp_path / "course", CLASS, database(backend, request))
    result = posenc_grade(course, "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr[-5000:]
    scores, rows = grades(db_url_of(course))
    assert scores == serial
    assert rows == len(CLASS), "one submission row per student"
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == len(CLASS) and all(": graded in " in line for line in lines), result.stderr
    assert {line.split("] ")[1].split(":")[0] for line in lines} == {s.name for s in CLASS}
    assert f"graded:  {len(CLASS)}" in result.stdout and "failed:  0" in result.stdout, result.stdout
    log = Path(result.stdout.split("log:")[1].strip())
    assert log.parent == course / "logs" and log.read_text().count("\n=== ") == len(CLASS)
    assert "database is locked" not in log.read_text()


def test_shards_on_one_postgresql_gradebook_equal_a_serial_run(serial, postgresql, tmp_path):
    """Three shards started at once, as a Kubernetes Indexed Job starts them, each grading its part of the
    class with two workers into one PostgreSQL gradebook: together, the scores of a serial run."""
    course = make_course(tmp_path / "course", CLASS, postgresql())
    shards = [subprocess.Popen([sys.executable, "-m", "posenc_course.grade", "--shard", f"{i}/3", "--jobs", "2"],
                               cwd=course, env=nbgrader_env(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for i in range(3)]
    outputs = [shard.communicate(timeout=900) for shard in shards]
    assert [shard.returncode for shard in shards] == [0, 0, 0], outputs
    parts = [int(out.split(" submissions of posenc")[0].rsplit(" ", 1)[1]) for out, _ in outputs]
    assert sum(parts) == len(CLASS) and max(parts) - min(parts) <= 1, parts
    scores, rows = grades(db_url_of(course))
    assert scores == serial and rows == len(CLASS)
    assert len(list((course / "logs").glob("grade-*-shard-*-of-3.log"))) == 3


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
            if entry.isdigit() and "hardened_grading.kernel" in open(f"/proc/{entry}/cmdline").read() \
                    and str(course) in os.readlink(f"/proc/{entry}/cwd"):
                found.append(entry)
        except OSError:
            pass
    return found


def gone(pids, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in pids):
        time.sleep(0.1)
    return not any(Path(f"/proc/{pid}").exists() for pid in pids)


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
    run = subprocess.Popen([sys.executable, "-m", "posenc_course.grade", "--jobs", "2"], cwd=course,
                           env=nbgrader_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    sleeper = course / "autograded" / "hostile-sleep" / "posenc" / "exercises.ipynb"
    deadline = time.monotonic() + 300
    while not sleeper.exists():  # its notebook is sanitized: it is about to run
        assert run.poll() is None and time.monotonic() < deadline, "posenc-grade ended before it could be interrupted"
        time.sleep(0.05)
    time.sleep(4)  # in its sleeping cell (ex09), 20 s from its timeout
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


def kernel_launcher_of(course):
    """The pid of a grading kernel that is starting in `course` (the launcher, before it becomes bwrap), or None."""
    for pid, cmdline in processes_of(course).items():
        if "hardened_grading.kernel" in cmdline and not cmdline.startswith("bwrap"):
            return pid
    return None


def nothing_left(course, seconds):
    """Wait until no process works for `course`; return what is left after `seconds`."""
    deadline = time.monotonic() + seconds
    while processes_of(course) and time.monotonic() < deadline:
        time.sleep(0.1)
    return processes_of(course)


GRADERS = {"nbgrader autograde": ["-m", "nbgrader", "autograde", "posenc"],
           "posenc-grade": ["-m", "posenc_course.grade", "--jobs", "2"]}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("command", GRADERS)
def test_a_grader_killed_while_a_kernel_starts_leaves_nothing_running(tmp_path, command):
    """SIGKILL the grading command at the worst moment, while a kernel is starting (its launcher has not yet
    become the sandbox): every process it started ends (workers, launchers, bwrap, kernels), none is left
    waiting for a grader that is gone, and the same command again grades the class right."""
    class_ = [STUDENTS[name] for name in ("reference", "wrong-strict_causal")]
    course = make_course(tmp_path / "course", class_)
    run = subprocess.Popen([sys.executable, *GRADERS[command]], cwd=course, env=nbgrader_env(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while kernel_launcher_of(course) is None:
        assert run.poll() is None and time.monotonic() < deadline, f"{command} ended before a kernel started"
        time.sleep(0.01)
    graders = set(processes_of(course))  # the command and its workers: each names its kernels' folders
    run.send_signal(signal.SIGKILL)
    run.wait()
    # Left behind, a kernel would wait for its grader forever; ended, they go in well under a second. 60 s
    # is room for a loaded machine (and for a worker's stop backstop, grade_class.STOP_GRACE).
    left = nothing_left(course, seconds=60)
    assert not left, f"processes outlived the killed {command}: {left}"

    result = subprocess.run([sys.executable, *GRADERS[command]], cwd=course, env=nbgrader_env(),
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert_expected_scores(db_url_of(course), class_)
    assert not nothing_left(course, seconds=60), "a finished run left processes behind"
    assert not orphaned_kernel_folders(graders), "a killed grader's kernel folders outlived the next run"


def orphaned_kernel_folders(graders):
    """The kernels' private folders (``hardened-grading-kernel-PID-*``) of the graders of pids `graders` that are
    gone (other tests, grading at the same time, have folders of their own)."""
    from hardened_grading.grading import KERNEL_FOLDER

    owners = {folder: folder.name.removeprefix(KERNEL_FOLDER).partition("-")[0]
              for folder in Path(tempfile.gettempdir()).glob(f"{KERNEL_FOLDER}*-*")}
    return [folder.name for folder, owner in owners.items()
            if owner.isdigit() and int(owner) in graders and not Path(f"/proc/{owner}").exists()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_that_dies_costs_only_its_own_submission(tmp_path):
    """A worker killed while grading: its submission is reported as failed, and why; a new worker grades
    the rest; the next run grades that one submission and touches no other."""
    course = make_course(tmp_path / "course", SMALL_CLASS)
    run = subprocess.Popen([sys.executable, "-m", "posenc_course.grade", "--jobs", "2"], cwd=course,
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


# The gradebook under load: far more writers than a class ever has ---------------------------------

def gradebook_writer(db_url, students, errors):
    """What nbgrader's autograde does to the gradebook for each of `students`: open it six times, create
    the student and the submission, and write every grade (each student's own scores)."""
    import warnings

    from nbgrader.api import Gradebook

    warnings.filterwarnings("ignore")
    try:
        for student in students:
            for step in ("student", "assignment", "submission", "notebook", "assignment", "grades"):
                with Gradebook(db_url, "posenc") as gradebook:
                    if step == "student":
                        gradebook.update_or_create_student(student)
                    elif step == "submission":
                        gradebook.update_or_create_submission("posenc", student)
                    elif step == "grades":
                        notebook = gradebook.find_submission_notebook("exercises", "posenc", student)
                        for grade in notebook.grades:
                            grade.auto_score = expected_score(student, grade.name, grade.max_score)
                        gradebook.db.commit()
                    else:
                        gradebook.find_assignment("posenc")
    except Exception as error:  # reported to the test, which shows them all
        errors.put(f"{type(error).__name__}: {error}")


def expected_score(student, cell, max_score):
    return max_score * (sum(map(ord, student + cell)) % 5) / 4


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_gradebook_loses_nothing_under_many_concurrent_writers(backend, request, tmp_path):
    """Eight processes, on two cores, write 120 submissions' grades as autograde writes them, into the URL
    posenc-grade gives its workers: no error (no 'database is locked'), no row lost, every score right."""
    course = make_course(tmp_path / "course", [], database(backend, request))
    db_url = db_url_of(course)
    context = multiprocessing.get_context("spawn")
    errors = context.Queue()
    writers = [context.Process(target=gradebook_writer,
                               args=(db_url, [f"w{w}-s{s:02d}" for s in range(15)], errors)) for w in range(8)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=600)
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert not found, found
    assert [writer.exitcode for writer in writers] == [0] * 8
    scores, rows = grades(db_url)
    assert rows == 120 and len(scores) == 120
    from nbgrader.api import Gradebook

    with Gradebook(db_url, "posenc") as gradebook:
        maximum = {cell.name: cell.max_score for cell in gradebook.find_notebook("exercises", "posenc").grade_cells}
    for student, cells in scores.items():
        assert cells == {cell: expected_score(student, cell, maximum[cell]) for cell in maximum}, student


# The command's own rules ---------------------------------------------------------------------------

@given(st.lists(st.text("abcxyz0123456789", min_size=1, max_size=6), unique=True, max_size=40),
       st.integers(1, 12))
def test_shards_split_the_class_into_equal_disjoint_parts(students, count):
    parts = [grade_class.shard_of(students, index, count) for index in range(count)]
    assert sorted(s for part in parts for s in part) == sorted(students)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert parts == [grade_class.shard_of(list(reversed(students)), i, count) for i in range(count)], \
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


def test_the_kubernetes_manifest_runs_one_shard_per_completion_index():
    """deploy/grade-class-job.yaml: an Indexed Job whose pods' command is a valid posenc-grade command line,
    with as many shards as completions."""
    import shlex

    import yaml

    job = yaml.safe_load((Path(__file__).parents[1] / "deploy" / "grade-class-job.yaml").read_text())
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    [container] = spec["template"]["spec"]["containers"]
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert int(env["SHARD_COUNT"]) == spec["completions"], "SHARD_COUNT must equal completions"
    assert container["command"] == ["sh", "-c"]
    words = shlex.split(container["args"][0])
    assert words[0] == "exec" and words[1].endswith("/posenc-grade")
    index = spec["completions"] - 1  # the last pod, as the shell would expand its command
    expanded = [w.replace("$JOB_COMPLETION_INDEX", str(index)).replace("$SHARD_COUNT", env["SHARD_COUNT"])
                .replace("$GRADEBOOK_URL", "postgresql://u@db/posenc") for w in words[2:]]
    args = grade_class.parser("posenc-grade", ASSIGNMENT).parse_args(expanded)
    assert grade_class.parse_shard(args.shard) == (index, spec["completions"])
    assert args.db_url.startswith("postgresql://") and args.course == container["workingDir"]


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
    run = subprocess.Popen([sys.executable, "-m", "posenc_course.grade", "--jobs", "2"], cwd=course,
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
    progress = grade_class.Progress(4, stream=stream, to_skip=2)
    progress.started -= 10  # 10 s ago
    progress(grade_class.Outcome("s1", "skipped", 0.0))
    progress(grade_class.Outcome("s2", "skipped", 0.0))
    progress(grade_class.Outcome("s3", "graded", 10.0, problems=(("timed out", "cell ex09_x (ex09)", "why"),)))
    lines = stream.getvalue().splitlines()
    assert lines[:2] == ["[1/4] s1: already graded, skipped", "[2/4] s2: already graded, skipped"]
    assert "(0.10/s, 10 s left)" in lines[2] and "timed out: cell ex09_x (ex09)" in lines[2], lines[2]
    text = grade_class.summary([grade_class.Outcome("s1", "skipped", 0.0),
                                grade_class.Outcome("s3", "graded", 10.0, problems=(("timed out", "cell c", "why"),))],
                               20.0, 2, "log", "posenc")
    assert "0.05 graded per second" in text and "    s3: timed out: cell c: why" in text, text


def test_the_grading_kernel_does_not_log_the_grader_s_own_interrupts(tmp_path):
    """An interrupt that lands while the kernel handles a message, not a cell (as jupyter_client's shutdown
    sends one), makes ipykernel log 'ERROR | KeyboardInterrupt caught in kernel.': not from the grading kernel."""
    from jupyter_client import KernelManager

    from hardened_grading import kernel

    manager = KernelManager(kernel_spec_manager=kernel.GradingKernelSpecManager(), kernel_name=kernel.KERNEL_NAME)
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
