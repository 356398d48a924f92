"""The grading sandbox holds: real ``nbgrader autograde`` and ``generate_feedback`` runs on probes.

Each probe rides in an otherwise correct submission (its code is put first in one answer cell).
The class is graded in one run, with the grader's ``HOME`` a folder that holds a secret. Then,
from outside the sandbox, the tests check that the probe reached nothing and left nothing: no
connection reached a listener on the host's loopback, no secret appears in ``autograded/`` or
``feedback/``, no process it started still runs, nothing it wrote is in the host's ``/tmp``. The
bombs (processes, file size, ``/tmp`` size, output) each cost at most their own exercise.
"""

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from hardened_grading import errors
from hardened_grading.sandbox import bwrap as sandbox_bwrap
from hardened_grading.sandbox import cgroup as sandbox_cgroup
from hardened_grading.sandbox import limits as sandbox_limits
from hardened_grading.sandbox import probe as sandbox_probe
from hardened_grading.hooks.unfinished import KERNEL_FOLDER
from posenc_course import report
from posenc_course.course import generate, nbgrader_env, new_course
from posenc_course.layout import NOTEBOOK, ROOT
from posenc_course.submissions import reference_answers

from ..helpers import children
from ..helpers.children import run_nbgrader
from ..helpers.grading import Student, answered, assert_scores, prefixed, some, submit

pytestmark = pytest.mark.skipif(sandbox_probe.sandbox_problem() is not None, reason="no bubblewrap sandbox here")

RUN = uuid.uuid4().hex[:12]  #: marks what this run's probes leave, to find it afterwards
MARKER = f"posenc-probe-{RUN}"
SECRET = f"secret-{RUN}-do-not-leak"
SHADOW = Path("/etc/shadow")


def shadow_lines():
    """The host's /etc/shadow lines with a password field, when this test can read them (root)."""
    try:
        return [line for line in SHADOW.read_text().splitlines() if line.count(":") >= 2]
    except OSError:
        return []


def reads(paths):
    """Code that prints whatever it can read of `paths`, and lists the grader's home."""
    return ("import os\n"
            f"for _path in {[str(p) for p in paths]!r}:\n"
            "    try:\n"
            "        print(_path, open(_path).read())\n"
            "    except OSError as _error:\n"
            "        print(_path, 'unreadable:', _error)\n"
            "for _folder in (os.path.expanduser('~'), os.environ.get('POSENC_REAL_HOME', '/root')):\n"
            "    try:\n"
            "        print(_folder, os.listdir(_folder))\n"
            "    except OSError as _error:\n"
            "        print(_folder, 'unlistable:', _error)")


DETACH = ("import os, subprocess, sys\n"
          f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '{MARKER}-detached'],\n"
          "                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
          "if os.fork() == 0:\n"
          "    os.setsid()\n"
          "    if os.fork() == 0:\n"
          f"        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(300)', '{MARKER}-daemon'])\n"
          "    os._exit(0)")
FORK_BOMB = ("import os, time\n"
             "for _ in range(5000):  # bounded, and stopped by the process cap long before\n"
             "    if os.fork() == 0:\n"
             "        time.sleep(120)\n"
             "        os._exit(0)")
FILE_BOMB = ("with open('bomb.bin', 'wb') as _bomb:\n"
             "    for _ in range(1024):\n"
             "        _bomb.write(bytes(2**20))")
TMP_BOMB = ("for _i in range(4096):\n"
            "    with open(f'/tmp/bomb-{_i}.bin', 'wb') as _bomb:\n"
            "        _bomb.write(bytes(2**20))")
FLOOD = "for _ in range(200000):\n    print('flood ' * 20)"
OWN_FOLDER = ("import os\n"
              "assert os.getcwd().endswith(os.path.join('autograded', 'probe-own-folder', 'posenc')), os.getcwd()\n"
              "open('scratch.txt', 'w').write('kept')\n"
              "assert open('scratch.txt').read() == 'kept'")


CLEAN_AFTER_RESTART = (
    "import os\n"
    f"assert not os.path.exists('/tmp/{MARKER}-before-crash'), 'the crashed kernel left its /tmp'\n"
    "_others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]\n"
    "assert not _others, f'processes of the crashed kernel still run: {_others}'")


def first_in(notebook, cell_id_prefix, code):
    """Put `code` first in the first answer cell whose grade_id starts with `cell_id_prefix`."""
    from posenc_course.submissions import grade_id
    cell = next(c for c in notebook.cells if (grade_id(c) or "").startswith(cell_id_prefix)
                and c.metadata.get("nbgrader", {}).get("solution"))
    cell.source = code + "\n\n" + cell.source
    return notebook


PROBES = [
    Student("reference", answered()),
    Student("probe-network", prefixed("ex01_sinusoidal_row", lambda kit: (
        "import socket\n"
        f"for _host in ('127.0.0.1', {kit.host_address!r}):\n"
        "    try:\n"
        f"        socket.create_connection((_host, {kit.port}), timeout=3).sendall(b'hidden tests')\n"
        "        print('connected to', _host)\n"
        "    except OSError as _error:\n"
        "        print('no network:', _error)"))),
    Student("probe-secrets", prefixed("ex02_add_positions", lambda kit: reads([kit.home / "secret.txt", SHADOW]))),
    Student("probe-processes", prefixed("ex03_causal_mask", DETACH)),
    Student("probe-tmp", prefixed("ex04_clipped_relative_bias", f"open('/tmp/{MARKER}', 'w').write('left behind?')")),
    Student("probe-own-folder", prefixed("ex05_apply_rope", OWN_FOLDER)),
    # A crash after leaving a file in /tmp and a detached child: the kernel restarted for the next
    # cells is clean, or the check in ex07's answer cell fails and ex07 loses its points.
    Student("probe-restart", answered(edit=lambda notebook, kit: first_in(first_in(notebook, "ex04_clipped_relative_bias", (
        f"open('/tmp/{MARKER}-before-crash', 'w').write('x')\n" + DETACH + "\nos._exit(1)")),
        "ex07_", CLEAN_AFTER_RESTART)), loses=some("ex04"), says="KernelDied"),
    Student("bomb-fork", prefixed("ex06_rotation_2d", FORK_BOMB), loses=some("ex06"), says="BlockingIOError"),
    Student("bomb-file", prefixed("ex08_interpolate_position_table", FILE_BOMB), loses=some("ex08"),
            says="File too large"),
    Student("bomb-tmp", prefixed("ex09_decode_position_ids", TMP_BOMB), loses=some("ex09"),
            says="No space left on device"),
    Student("bomb-output", prefixed("ex01_sinusoidal_row", FLOOD), says="was dropped while grading"),
]


class Listener:
    """A TCP listener on the host's loopback that records every connection."""

    def __init__(self):
        self.socket = socket.create_server(("0.0.0.0", 0))
        self.port = self.socket.getsockname()[1]
        self.connections = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                connection, address = self.socket.accept()
            except OSError:
                return
            self.connections.append(address)
            connection.close()


def host_address():
    """This machine's address on its network (not loopback), or loopback when it has none."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            return probe.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def printed(course, student):
    """Everything the graded notebook of `student` shows as output: text, displays' plain text, errors and their
    messages."""
    graded = nbformat.read(course / "autograded" / student / "posenc" / NOTEBOOK, as_version=4)
    return "\n".join(str(o.get(key, "")) + str(o.get("data", {}).get("text/plain", "") if key == "text" else "")
                     for c in graded.cells for o in c.get("outputs", []) for key in ("text", "ename", "evalue"))


def marked_processes():
    found = []
    for entry in os.listdir("/proc"):
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if MARKER in command and "pytest" not in command:
            found.append(f"{entry}: {command}")
    return found


def kernel_folders(grader):
    """The kernels' private folders that the grader of pid `grader` made and left (other graders, of other
    tests running at the same time, make their own)."""
    return {p.name for p in Path("/tmp").glob(f"{KERNEL_FOLDER}{grader}-*")}


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """Autograde PROBES in one run, with a secret in the grader's HOME; then generate their feedback."""
    course = new_course(tmp_path_factory.mktemp("course"))
    home = tmp_path_factory.mktemp("home")
    (home / "secret.txt").write_text(SECRET + "\n")
    listener = Listener()
    kit = SimpleNamespace(course=course, release=generate(course), home=home, port=listener.port,
                          host_address=host_address(),
                          answers=reference_answers(course / "source" / "posenc" / NOTEBOOK))
    for student in PROBES:
        submit(student, kit)
    env = nbgrader_env(HOME=str(home), POSENC_REAL_HOME=os.environ.get("HOME", "/root"))
    grader = children.popen([sys.executable, "-m", "nbgrader", "autograde", "posenc", "--force"], cwd=course,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    graded = subprocess.CompletedProcess(grader.args, None, *grader.communicate(timeout=1800))
    graded.returncode = grader.returncode
    processes_after = marked_processes()
    feedback = run_nbgrader(course, "generate_feedback", "posenc", "--force", env=env)
    yield SimpleNamespace(course=course, result=graded, feedback=feedback, listener=listener,
                          processes=processes_after, new_folders=kernel_folders(grader.pid),
                          scores=report.exercise_scores(course / "gradebook.db"))
    listener.socket.close()


def test_the_probed_class_is_graded(probed):
    assert probed.result.returncode == 0, probed.result.stdout[-3000:] + probed.result.stderr[-3000:]
    assert "running over TCP" not in probed.result.stdout + probed.result.stderr, "kernels must use ipc"
    assert probed.feedback.returncode == 0, probed.feedback.stdout[-3000:] + probed.feedback.stderr[-3000:]
    assert set(probed.scores) == {student.name for student in PROBES}


@pytest.mark.parametrize("student", PROBES, ids=lambda s: s.name)
def test_each_probe_costs_at_most_its_own_exercise(probed, student):
    """A probe's correct answers keep full marks; a bomb costs its own exercise and nothing else."""
    assert_scores(probed.scores, student.name, student.loses)


@pytest.mark.parametrize("student", [s for s in PROBES if s.says], ids=lambda s: s.name)
def test_the_graded_notebook_says_which_limit_stopped_a_bomb(probed, student):
    assert student.says in printed(probed.course, student.name)


def test_no_connection_reaches_the_host(probed):
    shown = printed(probed.course, "probe-network")
    assert "no network:" in shown and "connected to" not in shown
    assert probed.listener.connections == []


def test_no_secret_of_the_machine_appears_in_grades_or_feedback(probed):
    secrets = [SECRET, *shadow_lines()]
    assert secrets[0] and (os.geteuid() != 0 or len(secrets) > 1), "the root test must see /etc/shadow"
    files = [p for folder in ("autograded", "feedback") for p in (probed.course / folder).rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in files), "no feedback was generated"
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        leaked = [secret[:20] for secret in secrets if secret in text]
        assert not leaked, f"{path} shows {leaked}"
    shown = printed(probed.course, "probe-secrets")
    assert "secret.txt unreadable" in shown and "/etc/shadow unreadable" in shown


def test_no_process_a_submission_started_outlives_grading(probed):
    assert probed.processes == []
    graded = nbformat.read(probed.course / "autograded" / "probe-processes" / "posenc" / NOTEBOOK, as_version=4)
    assert not any(o.get("output_type") == "error" for c in graded.cells for o in c.get("outputs", [])), \
        "the probe must have started its processes"


def test_nothing_written_to_tmp_is_left_on_the_host(probed):
    assert not Path(f"/tmp/{MARKER}").exists()
    assert not list(Path("/tmp").glob("bomb-*.bin"))
    assert probed.new_folders == set(), "the kernels' private folders must be removed"


def test_the_kernel_writes_in_the_students_own_folder(probed):
    assert (probed.course / "autograded" / "probe-own-folder" / "posenc" / "scratch.txt").read_text() == "kept"


def test_an_output_flood_is_cut_short(probed):
    graded = probed.course / "autograded" / "bomb-output" / "posenc" / NOTEBOOK
    assert graded.stat().st_size < 4 * 2**20, graded.stat().st_size


# The sandbox's parts, each on its own -------------------------------------------------------------

@pytest.mark.parametrize("text, problem", [
    ("memory_mb=0", "N >= 1"),
    ("memroy_mb=512", "NAME one of"),
    ("processes=lots", "N >= 1"),
])
def test_bad_limits_are_refused_with_the_names_allowed(text, problem):
    with pytest.raises(ValueError, match=problem):
        sandbox_limits.Limits.parse(text)


def test_limits_round_trip_through_the_kernels_argument():
    limits = sandbox_limits.Limits(memory_mb=1024, processes=64, tmp_mb=32)
    assert sandbox_limits.Limits.parse(limits.argument().partition("=")[2]) == limits


@pytest.mark.parametrize("connection, others, problem", [
    ({"transport": "tcp", "ip": "127.0.0.1"}, [], "needs Jupyter's ipc transport"),
    ({"transport": "ipc", "ip": "{folder}/kernel-ipc"}, ["kernel-other.json"], "holds other files"),
    ({"transport": "ipc", "ip": "/elsewhere/kernel-ipc"}, [], "not beside its connection file"),
])
def test_the_sandbox_refuses_a_kernel_it_cannot_isolate(tmp_path, connection, others, problem):
    import json
    connection = {key: value.format(folder=tmp_path) for key, value in connection.items()}
    (tmp_path / "kernel.json").write_text(json.dumps(connection))
    for name in others:
        (tmp_path / name).write_text("{}")
    with pytest.raises(errors.SandboxError, match=problem):
        sandbox_bwrap.connection_folder(tmp_path / "kernel.json")


def test_the_kernel_started_by_jupyter_over_tcp_refuses_to_run_unsandboxed(tmp_path):
    """Picked by hand in JupyterLab (TCP), the grading kernel says why it cannot start."""
    import json
    import subprocess
    import sys
    (tmp_path / "kernel.json").write_text(json.dumps({"transport": "tcp", "ip": "127.0.0.1"}))
    started = subprocess.run([sys.executable, "-m", "hardened_grading.sandbox.launcher", "-f", str(tmp_path / "kernel.json")],
                             capture_output=True, text=True, timeout=60)
    assert started.returncode != 0 and "needs Jupyter's ipc transport" in started.stderr, started.stderr


def test_honest_work_is_far_from_every_limit(tmp_path):
    """The reference answers keep full marks under a quarter of every default limit: honest work
    (about 20 threads, 1 s of CPU a cell, under 300 MiB, no files, small outputs and replies to the judge, a
    few seconds in all) never comes near them."""
    course = new_course(tmp_path / "course")
    kit = SimpleNamespace(course=course, release=generate(course),
                          answers=reference_answers(course / "source" / "posenc" / NOTEBOOK))
    submit(PROBES[0], kit)
    defaults = sandbox_limits.Limits()
    tight = [f"--ResilientExecute.{name}={max(1, getattr(defaults, name) // 4)}"
             for name in ("memory_mb", "processes", "cpu_seconds_per_cell", "file_mb", "tmp_mb")]
    from hardened_grading.preprocessors.execute import GRADER_LIMITS, ResilientExecute  # outputs, comms, replies, the budget
    tight += [f"--ResilientExecute.{name}={ResilientExecute.class_traits()[name].default_value // 4}"
              for name in GRADER_LIMITS]
    result = run_nbgrader(course, "autograde", "posenc", "--force", *tight)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert_scores(report.exercise_scores(course / "gradebook.db"), "reference", {})


def in_child(function):
    """Run `function` in a forked child (its rlimits and cgroup stay its own); return what it returns."""
    import pickle
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        try:
            result = function()
        except BaseException as error:  # noqa: BLE001 - carried back to the test
            result = error
        os.write(write_end, pickle.dumps(result))
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stream:
        data = stream.read()
    os.waitpid(child, 0)
    return pickle.loads(data)


def test_a_user_other_than_root_is_capped_by_rlimit_nproc(monkeypatch):
    """Without a cgroup, RLIMIT_NPROC caps the sandbox: the user's tasks now, plus the limit."""
    import resource
    monkeypatch.setattr(sandbox_cgroup, "_pids_cgroup", lambda limit: None)
    monkeypatch.setattr(os, "geteuid", lambda: 4242)

    def capped():
        how = sandbox_cgroup.cap_processes(50)
        return how, resource.getrlimit(resource.RLIMIT_NPROC)[0], sandbox_cgroup._tasks_of_user(os.getuid())

    how, limit, tasks = in_child(capped)
    assert how.startswith("RLIMIT_NPROC") and tasks + 40 <= limit <= tasks + 60, (how, limit, tasks)


def test_root_without_a_cgroup_is_told_that_processes_are_not_capped(monkeypatch):
    monkeypatch.setattr(sandbox_cgroup, "_pids_cgroup", lambda limit: None)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert "a fork bomb is stopped only by the time limit" in sandbox_cgroup.process_cap_problem()
    assert in_child(lambda: sandbox_cgroup.cap_processes(50)) is None


@pytest.mark.skipif(os.geteuid() != 0 or sandbox_cgroup.process_cap_problem() is not None, reason="needs a pids cgroup")
def test_the_pids_cgroup_holds_the_cap_and_is_removed_when_its_kernel_ends():
    def capped():
        how = sandbox_cgroup.cap_processes(50)
        group = Path(how.split("(", 1)[1].rstrip(")"))
        return how, (group / "pids.max").read_text().strip(), str(group)

    how, maximum, group = in_child(capped)
    assert how.startswith("a pids cgroup") and maximum == "50"
    sandbox_cgroup.remove_stale_cgroups()
    assert not Path(group).exists()


#: A kernel's launcher whose sandbox outlives it: it caps itself in its own pids cgroup, starts a long sleep there
#: (the leftover), says the sleep's pid and the group, and ends.
LEFT_OVER = """
import os, sys
from hardened_grading.sandbox import cgroup
how = cgroup.cap_processes(50)
sleeper = os.fork()
if sleeper == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # not the pipes the test reads to their end
    os.dup2(null, 2)
    os.execvp("sleep", ["sleep", "300"])
print(sleeper, how.split("(", 1)[1].rstrip(")"), flush=True)
"""


@pytest.mark.skipif(os.geteuid() != 0 or sandbox_cgroup.process_cap_problem() is not None, reason="needs a pids cgroup")
def test_what_a_stale_cgroup_still_holds_is_killed_and_the_group_removed():
    """A sandbox left over by a kernel whose launcher ended (its grader died as it started) ran for ever, and each
    grading run after it waited a second per such group for it to empty, after every kernel."""
    said = subprocess.run([sys.executable, "-c", LEFT_OVER], capture_output=True, text=True, timeout=120, cwd=ROOT)
    sleeper, group = said.stdout.split()
    try:
        assert Path(group).exists() and not pid_gone(int(sleeper), 0), said.stderr
        sandbox_cgroup.remove_stale_cgroups()
        assert pid_gone(int(sleeper), 30), "the leftover still runs"
        assert not Path(group).exists()
    finally:
        if not pid_gone(int(sleeper), 0):
            os.kill(int(sleeper), 9)


def test_the_private_tmp_is_mounted_before_anything_bound_under_it(tmp_path):
    """A course or a Python environment made under the host's /tmp (a fresh clone there, pytest's own
    folders) stays visible: bubblewrap mounts in order, and a later tmpfs on /tmp would hide it."""
    (tmp_path / "kernel.json").write_text("{}")
    student = tmp_path / "course" / "autograded" / "s" / "posenc"
    student.mkdir(parents=True)
    (tmp_path / "course" / "nbgrader_config.py").write_text("")
    args = sandbox_bwrap.sandbox_command(student, tmp_path, sandbox_limits.Limits())
    tmpfs = args.index("--tmpfs")
    assert args[tmpfs + 1] == "/tmp"
    bound_under_tmp = [i for i, arg in enumerate(args[:-1]) if arg in ("--bind", "--ro-bind")
                       and args[i + 2].startswith("/tmp/")]
    assert bound_under_tmp and min(bound_under_tmp) > tmpfs, args


# A launcher as the grading kernel's is, up to the moment bwrap takes over: it binds itself to the grader, starts
# the watcher, then clears its parent-death signal (as bwrap does while it starts), starts bwrap's child (the
# sandbox's first process: in a session of its own, bwrap's --new-session, with no parent-death signal until it
# sets its own, and the kernel's folder in its arguments) and becomes a long sleep; the child says its pid on the
# launcher's stdout.
LAUNCHER = """
import ctypes, os, signal, sys
from hardened_grading.sandbox.parent import die_with_parent, watch_grader
grader, folder = int(sys.argv[1]), sys.argv[3]
die_with_parent(signal.SIGKILL)
if sys.argv[2] == "watched":
    watch_grader(grader, folder)
ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG 0: the window in which bwrap has none
if os.fork() == 0:
    os.setsid()
    print(os.getpid(), flush=True)
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(301)", "--bind", folder, folder])
os.execvp("sleep", ["sleep", "300"])
"""
# The grader: starts the launcher as jupyter_client starts a kernel (a session of its own), says the launcher's and
# the child's pids once the launcher is the sleep, and waits to be killed.
GRADER = """
import os, subprocess, sys, time
launcher = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(os.getpid()), *sys.argv[2:]],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
child = launcher.stdout.readline().strip()
while open(f"/proc/{launcher.pid}/cmdline").read().split("\\0")[0] != "sleep":
    time.sleep(0.01)
print(launcher.pid, child, flush=True)
time.sleep(300)
"""


def pid_gone(pid, seconds):
    """Whether `pid` ended (or became a zombie) within `seconds`: polled, the bound is room for a loaded machine."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def open_fd(pid, fd):
    """What file descriptor `fd` of process `pid` names, or "" if it was closed since its folder was listed (CI at
    29d4f79: a process that was starting closed one in between)."""
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except FileNotFoundError:
        return ""


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux 5.3's, Python 3.9's")
@pytest.mark.parametrize("watched", [True, False], ids=["watched", "unwatched"])
def test_a_grader_killed_while_bwrap_has_no_parent_death_signal_takes_the_sandbox_with_it(watched, tmp_path):
    """The window in bwrap's start where neither it nor its child has a parent-death signal: a grader SIGKILLed then
    still ends its kernel's launcher and the launcher's child (the sandbox's first process), through the watcher,
    which holds the only pidfds (none reaches the sandbox). Unwatched, both outlive their grader. A watcher that
    killed only the launcher, or its process group, left the child running (its own session), its kernel waiting
    for a grader that never comes."""
    grader = subprocess.Popen([sys.executable, "-c", GRADER, LAUNCHER, "watched" if watched else "bare",
                               str(tmp_path / "hardened-grading-kernel-1-abcdefgh")],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    launcher, child = map(int, grader.stdout.readline().split())
    try:
        for process in (launcher, child):
            fds = [open_fd(process, fd) for fd in os.listdir(f"/proc/{process}/fd")]
            assert not any("pidfd" in fd for fd in fds), fds
        grader.kill()
        grader.wait()
        # watched, they end in well under a second (30 s: room for a loaded machine); unwatched, they are still there
        assert [pid_gone(process, 30 if watched else 3) for process in (launcher, child)] == [watched, watched]
    finally:
        for process in (launcher, child):
            if not pid_gone(process, 0):
                os.kill(process, 9)


def test_the_grading_kernel_starts_without_ipykernel_s_debugger():
    """A grading kernel has no debugger: importing debugpy is a fifth of a kernel's start, for nothing. ipykernel
    must see it as missing (if ipykernel changed how it looks, the saving would be lost unseen)."""
    code = ("from hardened_grading.sandbox.launcher import without_debugger; without_debugger()\n"
            "import sys, ipykernel.debugger as debugger, ipykernel.ipkernel\n"
            "print(debugger._is_debugpy_available, any(m.startswith(('debugpy', 'pydevd', '_pydevd')) and sys.modules[m] "
            "for m in sys.modules))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert shown.stdout.split() == ["False", "False"], shown.stdout + shown.stderr
