"""Workflows that must survive what instructors, authors and learners do, with the real commands.

- Authoring after ``make demo``: the demo grades in a course folder of its own (``demo/``), so the
  repository's course can still be regenerated after the assignment's cells change; and ``make release``
  (``posenc_course.generate``), when nbgrader refuses, puts the old release back and says what to do in
  a few lines.
- ``nbgrader release_feedback`` releases everyone's feedback, whatever comes first alphabetically: a
  submission placed by hand (no ``timestamp.txt``, no ``submission_secret.txt``), one without a
  timestamp, one whose files cannot be read.
- ``posenc-lab`` stops its JupyterLab, and the kernels it started, when it gets SIGTERM, SIGHUP or SIGINT.
- ``make install`` installs no test tool (chromium, PostgreSQL); ``make test`` does.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import warnings

import nbformat
import psutil
import pytest

from posenc_course.instructor import demo
from posenc_course.course import nbgrader_env, new_course
from posenc_course.layout import ASSIGNMENT, ROOT, course_root, release_notebook, source_notebook

from ..helpers.children import run_nbgrader


# --- authoring after the demo ------------------------------------------------------------------------


def add_answer_cell(course, assignment=ASSIGNMENT):
    """An author's change that nbgrader refuses once there are submissions: one more answer cell."""
    path = source_notebook(assignment, root=course)
    notebook = nbformat.read(str(path), as_version=4)
    cell = nbformat.v4.new_code_cell("### BEGIN SOLUTION\nscratch = 1\n### END SOLUTION")
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "locked": False, "task": False,
                                 "grade_id": "scratch_answer", "schema_version": 3}
    notebook.cells.append(cell)
    nbformat.write(notebook, str(path))


def record_demo_submissions(course, assignment=ASSIGNMENT):
    """The demo's three submissions, written as ``make demo`` writes them and recorded in the demo's
    gradebook as ``nbgrader autograde`` records them (without grading them, which costs a minute)."""
    from nbgrader.api import Gradebook

    demo.make_demo_submissions(course, assignment)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        warnings.simplefilter("ignore")  # nbgrader's own use of SQLAlchemy warns: not ours to fix
        for student in demo.STUDENTS:
            gradebook.update_or_create_student(student)
            gradebook.add_submission(assignment, student)


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """A copy of this repository's course, its posenc generated, with a demo made in it as make demo does."""
    course = new_course(tmp_path_factory.mktemp("repository") / "course")
    generated = run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    assert generated.returncode == 0, generated.stderr
    folder = demo.make_course(course / "demo", root=course)
    assert course_root(folder) == folder  # nbgrader and the course's code, run in demo/, work on demo/
    made = run_nbgrader(folder, "generate_assignment", ASSIGNMENT, "--force")
    assert made.returncode == 0, made.stderr
    record_demo_submissions(folder)
    add_answer_cell(course)
    add_answer_cell(folder)
    return course


def test_after_the_demo_the_repository_course_is_regenerated_with_changed_cells(repository):
    result = run_nbgrader(repository, "generate_assignment", ASSIGNMENT, "--force")
    assert result.returncode == 0, result.stdout + result.stderr
    released = nbformat.read(str(release_notebook(ASSIGNMENT, root=repository)), as_version=4)
    assert any(cell.metadata.get("nbgrader", {}).get("grade_id") == "scratch_answer" for cell in released.cells)
    assert not (repository / "submitted").exists()  # the demo's submissions are in demo/ only


def test_the_demo_folder_is_made_afresh_and_a_folder_not_its_own_is_left_alone(tmp_path):
    course = new_course(tmp_path / "course")
    folder = demo.make_course(course / "demo", root=course)
    (folder / "submitted").mkdir()
    assert not (demo.make_course(folder, root=course) / "submitted").exists()
    (folder / demo.MARK).unlink()
    with pytest.raises(SystemExit, match="not the demo's"):
        demo.make_course(folder, root=course)
    assert (folder / "nbgrader_config.py").exists()


def test_make_release_keeps_the_old_release_when_nbgrader_refuses_and_says_what_to_do(repository):
    """In the demo's folder, which has submissions, nbgrader refuses: the release stays, the message is short."""
    folder = repository / "demo"
    release = release_notebook(ASSIGNMENT, root=folder)
    before = release.read_bytes()
    result = subprocess.run([sys.executable, "-m", "posenc_course.authoring.generate", ASSIGNMENT], cwd=folder,
                            env=nbgrader_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert release.read_bytes() == before
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 3, result.stderr
    assert f"nbgrader refused to regenerate {ASSIGNMENT}" in result.stderr
    assert "nbgrader db student remove demo-blank --force" in result.stderr, result.stderr


# --- release_feedback --------------------------------------------------------------------------------


def feedback(course, student, *, secret=None, timestamp=None):
    """``feedback/STUDENT/posenc/exercises.html`` as generate_feedback writes it, with the files of the
    submission beside it: `secret` (a string, or ``"unreadable"``) and `timestamp`, when given."""
    folder = course / "feedback" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / "exercises.html").write_text(f"<html>feedback of {student}</html>")
    if secret == "unreadable":
        (folder / "submission_secret.txt").mkdir()
    elif secret is not None:
        (folder / "submission_secret.txt").write_text(secret)
    if timestamp is not None:
        (folder / "timestamp.txt").write_text(timestamp)


@pytest.mark.parametrize("broken", [False, True], ids=["placed-by-hand", "and-an-unreadable-one"])
def test_release_feedback_releases_everyone_it_can_whoever_comes_first(tmp_path, broken):
    from nbgrader.utils import notebook_hash

    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    if broken:
        feedback(course, "a0-broken", secret="unreadable", timestamp="2026-11-20 10:00:00.000000 UTC")
    feedback(course, "a1-by-hand")  # put in submitted/ by hand: neither file
    feedback(course, "b-no-timestamp", secret="secret-b")
    feedback(course, "c-collected", secret="secret-c", timestamp="2026-11-20 10:00:00.000000 UTC")
    result = run_nbgrader(course, "release_feedback", ASSIGNMENT, f"--Exchange.root={exchange}", timeout=300)
    output = result.stdout + result.stderr
    released = exchange / "posenc" / "feedback"
    for student in ("b-no-timestamp", "c-collected"):
        path = released / f"{notebook_hash(secret=f'secret-{student[0]}', notebook_id='exercises')}.html"
        assert path.exists(), output
        assert path.read_text() == f"<html>feedback of {student}</html>"
    assert sorted(p.name for p in released.iterdir()) == sorted(
        f"{notebook_hash(secret=f'secret-{s}', notebook_id='exercises')}.html" for s in "bc")
    assert re.search(r"Not releasing feedback for student 'a1-by-hand'.*hand them .*a1-by-hand/posenc/exercises.html",
                     output), output
    assert "Traceback" not in output, output
    if broken:
        assert result.returncode == 1, output
        assert "could not release the feedback of a0-broken" in output, output
    else:
        assert result.returncode == 0, output


# --- posenc-lab --------------------------------------------------------------------------------------


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_is_open(port):
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_posenc_lab_stops_jupyterlab_and_its_kernels_on_a_signal(tmp_path, stop):
    stop = getattr(signal, stop)
    port, token = free_port(), "posenc-test-token"
    private = tmp_path / "jupyter"
    environment = dict(nbgrader_env(), JUPYTER_CONFIG_DIR=str(private / "config"),
                       JUPYTER_RUNTIME_DIR=str(private / "runtime"), JUPYTER_DATA_DIR=str(private / "data"))
    command = [sys.executable, "-m", "posenc_course.student.lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={tmp_path}"]
    # A session of its own: the test's clean-up can then reach whatever posenc-lab leaves behind.
    lab = subprocess.Popen(command, cwd=tmp_path, env=environment, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    serving, log = threading.Event(), []

    def read_log():  # JupyterLab says when it serves: "... is running at: http://127.0.0.1:PORT/lab?token=..."
        for line in lab.stderr:
            log.append(line)
            if f"http://127.0.0.1:{port}/" in line:
                serving.set()

    threading.Thread(target=read_log, daemon=True).start()
    started, survivors = [], []
    try:
        assert serving.wait(120), "JupyterLab did not start:\n" + "".join(log[-40:])
        # It logs its address a moment before its socket accepts: wait for that too, a few ms.
        deadline = time.monotonic() + 30
        while not port_is_open(port):
            assert time.monotonic() < deadline and lab.poll() is None, "".join(log[-40:])
            time.sleep(0.02)
        print("".join(log))
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/kernels?token={token}", data=b"{}",
                                         method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 201
        started = psutil.Process(lab.pid).children(recursive=True)
        assert len(started) >= 2, started  # JupyterLab's server, and the kernel it started
        assert port_is_open(port)

        lab.send_signal(stop)
        code = lab.wait(60)
        _, survivors = psutil.wait_procs(started, timeout=5)
        assert not survivors, f"still running after posenc-lab stopped: {survivors}"
        assert not port_is_open(port), f"port {port} still open after posenc-lab stopped"
        assert code == 128 + stop  # as a shell reports a command stopped by that signal
    finally:  # whatever is left, on a failure: posenc-lab, its server and the kernel
        if lab.poll() is None:
            started += psutil.Process(lab.pid).children(recursive=True)
            lab.kill()
        lab.wait()
        for process in started:
            try:
                process.kill()
            except psutil.Error:
                pass


# --- make install, make test --------------------------------------------------------------------------


def make_dry_run(*args):
    """What ``make -n ARGS`` in the repository would run (nothing is run; recursive makes print too)."""
    result = subprocess.run(["make", "--no-print-directory", "-n", *args], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, env=dict(os.environ, MAKEFLAGS=""))
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_install_installs_no_test_tool_and_make_test_brings_them():
    install = make_dry_run("-B", "install")
    assert "bubblewrap" in install
    assert "chromium" not in install and "postgresql" not in install, install
    test = make_dry_run("test")
    assert "apt-get install -y -q chromium" in test and "apt-get install -y -q postgresql" in test, test
    assert "python -m pytest" in test
