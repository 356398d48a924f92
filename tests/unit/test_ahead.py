"""The next submission's kernel started ahead (:mod:`hardened_grading.sandbox.ahead`).

Unit tests of the hand-over on folders and processes made here (milliseconds). A real ``posenc-grade`` run
with one worker, where every submission but the first gets the kernel started while the one before it was
graded, is tests/grading/test_ahead_run.py's. Killing the command while such a kernel starts is
tests/grading/test_grade_class_runs.py's; the files of nbgrader's own fixtures (a notebook that reads a file beside it,
one that writes one) graded this way are tests/grading/test_foreign_courses.py's ``engine-grade-class``.
"""

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from hardened_grading.sandbox import ahead
from hardened_grading import errors
from hardened_grading.sandbox import bwrap
from hardened_grading.sandbox import launcher
from hardened_grading.sandbox import limits as sandbox_limits
from hardened_grading.hooks.submission import GRADED_MARKER


@pytest.fixture
def course(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    (tmp_path / "autograded").mkdir()
    return tmp_path


@pytest.fixture(autouse=True)
def clean_state():
    yield
    ahead.discard()
    ahead.expect(None)


def sleeper():
    """A process that stands for a kernel: it runs until it is killed."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])


def fake_started(course, student="s1", arguments=("--sandbox=require",), process=None):
    """A kernel started ahead for `student`, whose kernel manager is a stand-in around `process`."""
    folder = course / "autograded" / student / "ps1"
    staging = course / "autograded" / f"{ahead.STAGING}{os.getpid()}-x"
    staging.mkdir()
    connection = course / "connection"
    connection.mkdir()
    process = process or sleeper()
    km = SimpleNamespace(has_kernel=True, provisioner=SimpleNamespace(process=process),
                         _launch_args={"cwd": str(staging), "extra_arguments": [*arguments, "--student-folder=x"]})
    ahead._started = ahead.Started(os.path.realpath(folder), "hardened-grading", tuple(arguments), km,
                                   str(connection), str(staging))
    return folder, staging, connection, km


def nbgrader_made(folder):
    """The student's folder as nbgrader makes it before the kernel is asked for: the notebook and a data file."""
    folder.mkdir(parents=True)
    (folder / "ps1.ipynb").write_text("{}")
    (folder / "data.txt").write_text("42\n")


def test_take_moves_the_student_s_files_into_the_kernel_s_folder_and_puts_it_in_place(course):
    folder, staging, connection, km = fake_started(course)
    inode = staging.stat().st_ino
    nbgrader_made(folder)
    taken = ahead.take(folder, "hardened-grading", ["--sandbox=require"])
    try:
        assert taken == (km, str(connection))
        # The same folder (its sandbox's bind follows it), now at the student's path, with nbgrader's files.
        assert folder.stat().st_ino == inode and not staging.exists()
        assert sorted(p.name for p in folder.iterdir()) == ["data.txt", "ps1.ipynb"]
        assert (folder / "data.txt").read_text() == "42\n"
        # Restarted after a crash, it starts in the student's folder, without the staging folder's argument.
        assert km._launch_args == {"cwd": os.path.realpath(folder), "extra_arguments": ["--sandbox=require"]}
        assert ahead._started is None, "taken once: the caller owns it now"
    finally:
        km.provisioner.process.kill()
        km.provisioner.process.wait()


@pytest.mark.parametrize("asked", [
    {"folder": "s2", "kernel_name": "hardened-grading", "arguments": ["--sandbox=require"]},
    {"folder": "s1", "kernel_name": "python3", "arguments": ["--sandbox=require"]},
    {"folder": "s1", "kernel_name": "hardened-grading", "arguments": ["--sandbox=require", "--limits=memory_mb=512"]},
], ids=["another student", "another kernel", "other limits"])
def test_take_hands_over_nothing_for_another_submission_or_other_settings(course, asked):
    folder, staging, connection, km = fake_started(course)
    asked_folder = course / "autograded" / asked["folder"] / "ps1"
    nbgrader_made(asked_folder)
    assert ahead.take(asked_folder, asked["kernel_name"], asked["arguments"]) is None
    # Left as it was, for the submission it is for; the other submission's folder is untouched.
    assert ahead._started is not None and km.provisioner.process.poll() is None and staging.exists()
    assert sorted(p.name for p in asked_folder.iterdir()) == ["data.txt", "ps1.ipynb"]
    ahead.discard()
    assert km.provisioner.process.poll() is not None, "discard ends its kernel"
    assert not staging.exists() and not connection.exists()


@pytest.mark.parametrize("failing", ["a file's move", "the folder's rename"])
def test_a_hand_over_that_fails_part_way_puts_the_student_s_files_back(course, monkeypatch, failing):
    folder, staging, connection, km = fake_started(course)
    nbgrader_made(folder)
    real_rename, calls = os.rename, []

    def rename(source, target):
        calls.append(source)
        if (failing == "a file's move" and len(calls) == 2) or (failing == "the folder's rename" and source == str(staging)):
            raise OSError(28, "No space left on device")  # the second file: the first is moved already
        real_rename(source, target)

    monkeypatch.setattr(os, "rename", rename)
    assert ahead.take(folder, "hardened-grading", ["--sandbox=require"]) is None
    monkeypatch.setattr(os, "rename", real_rename)
    assert sorted(p.name for p in folder.iterdir()) == ["data.txt", "ps1.ipynb"]
    assert (folder / "data.txt").read_text() == "42\n" and (folder / "ps1.ipynb").read_text() == "{}"
    assert not staging.exists() and not connection.exists()
    assert km.provisioner.process.wait() != 0, "the kernel that could not be handed over is ended"


def test_a_kernel_started_ahead_that_died_is_not_handed_over(course):
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    folder, staging, connection, _ = fake_started(course, process=process)
    nbgrader_made(folder)
    assert ahead.take(folder, "hardened-grading", ["--sandbox=require"]) is None
    assert not staging.exists() and not connection.exists()
    assert sorted(p.name for p in folder.iterdir()) == ["data.txt", "ps1.ipynb"], "the student's files stay"


def test_discard_keeps_the_kernel_for_the_submission_still_to_come(course):
    folder, staging, _, km = fake_started(course)
    ahead.discard(keep=folder)
    assert ahead._started is not None and km.provisioner.process.poll() is None
    ahead.discard(keep=course / "autograded" / "s9" / "ps1")
    assert ahead._started is None and km.provisioner.process.wait() != 0 and not staging.exists()


def test_expected_is_the_next_folder_until_its_kernel_is_started(course):
    assert ahead.expected() is None
    folder, *_ = fake_started(course, "s1")
    ahead.expect(course / "autograded" / "s2" / "ps1")
    assert ahead.expected() == os.path.realpath(course / "autograded" / "s2" / "ps1")
    ahead.expect(folder)
    assert ahead.expected() is None, "its kernel is already started"


def test_staging_folders_of_workers_that_are_gone_are_removed(course):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    theirs = course / "autograded" / f"{ahead.STAGING}{ahead.owner(gone.pid)}abc"
    mine = course / "autograded" / f"{ahead.STAGING}{ahead.owner()}abc"
    # a live worker of another machine that shares the course folder: its pid means nothing here
    elsewhere = course / "autograded" / f"{ahead.STAGING}other-{ahead.owner(gone.pid)}abc"
    student = course / "autograded" / "s1" / "ps1"
    for folder in (theirs, mine, elsewhere, student):
        folder.mkdir(parents=True)
    ahead.remove_staging_folders(course)
    assert not theirs.exists() and mine.exists() and elsewhere.exists() and student.exists()
    ahead.remove_staging_folders(course, os.getpid())
    assert not mine.exists() and elsewhere.exists() and student.exists()


def test_the_sandbox_binds_the_staging_folder_where_the_student_s_folder_will_be(course):
    staging = course / "autograded" / f"{ahead.STAGING}1-x"
    staging.mkdir()
    connection = course / "connection"
    connection.mkdir()
    target = course / "autograded" / "s1" / "ps1"
    args = bwrap.sandbox_command(staging, connection, sandbox_limits.Limits(), seen_as=str(target))
    at = args.index(str(staging.resolve()))
    assert args[at - 1:at + 4] == ["--bind", str(staging.resolve()), str(target), "--chdir", str(target)]
    assert str(staging) not in args[at + 1:], "the kernel sees its folder at the student's path only"
    for outside in (course / "source" / "ps1", course.parent / "elsewhere"):
        with pytest.raises(errors.SandboxError, match="not a folder in"):
            bwrap.sandbox_command(staging, connection, sandbox_limits.Limits(), seen_as=str(outside))


def test_the_student_folder_option_is_read():
    options = launcher.parse_options(["--student-folder=/c/autograded/s1/ps1", "-f", "k.json"])
    assert options.student_folder == "/c/autograded/s1/ps1" and options.rest == ["-f", "k.json"]


@pytest.mark.parametrize(("settings", "ahead_mode"), [
    ({}, True), ({"start_ahead": False}, False), ({"sandbox": "off"}, False)], ids=["default", "switched off", "no sandbox"])
def test_kernels_are_started_ahead_only_when_sandboxed_and_not_switched_off(settings, ahead_mode):
    from hardened_grading.preprocessors.execute import ResilientExecute

    executor = ResilientExecute(**settings)
    executor.extra_arguments = executor.kernel_arguments()
    assert executor._ahead_mode() is ahead_mode


def test_a_kernel_started_ahead_that_does_not_answer_is_replaced_by_one_started_now(course, monkeypatch):
    """A kernel started ahead that is alive but never answers (here: a process that only sleeps) costs the
    submission nothing: after ``startup_timeout`` a kernel is started as usual, and the cells run in it."""
    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpec
    from nbclient.util import run_sync

    from hardened_grading.preprocessors.execute import ResilientExecute

    folder = course / "autograded" / "s1" / "ps1"
    folder.mkdir(parents=True)
    mute_folder = course / "mute"
    mute_folder.mkdir()
    mute = AsyncKernelManager(transport="ipc", ip=str(mute_folder / "ipc"), connection_file=str(mute_folder / "k.json"))
    mute._kernel_spec = KernelSpec(argv=[sys.executable, "-c", "import time; time.sleep(600)"], language="python")
    run_sync(mute.start_kernel)()
    process = mute.provisioner.process
    monkeypatch.setattr(ahead, "take", lambda *args: (mute, str(mute_folder)))
    monkeypatch.setattr(ResilientExecute, "_ahead_mode", lambda self: True)
    executor = ResilientExecute(sandbox="off", startup_timeout=3, timeout=60)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    monkeypatch.chdir(course)
    executor.preprocess(notebook, {"metadata": {"path": str(folder)}, "nbgrader": {"student": "s1"}})
    assert notebook.cells[0].outputs[0]["text"] == "42\n"
    assert process.wait(timeout=30) is not None, "the mute kernel is ended"
    assert not mute_folder.exists()
