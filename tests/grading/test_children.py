"""A grading command that a test starts dies with pytest (tests/helpers/children.py): pytest killed outright, by
SIGKILL, leaves neither the command nor its kernel's sandbox running."""

import os
import signal
import subprocess
import sys
import time

import nbformat

from hardened_grading.hooks.unfinished import KERNEL_FOLDER
from posenc_course.layout import ROOT, release_notebook

from ..helpers import children

#: The tiny test the pytest to be killed runs: it grades a notebook that sleeps in every answer cell, its output to
#: nowhere (a pipe would end it once pytest, its reader, is gone: SIGPIPE).
INNER_TEST = """
import subprocess

from tests.helpers import children


def test_a_long_grading_command():
    children.run([{check!r}, {notebook!r}], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
"""


def sleeping_notebook(path):
    """The core assignment's release, each answer cell sleeping ten minutes first: a grading run far longer than the
    wait below, though each cell is stopped at the course's cell timeout."""
    notebook = nbformat.read(str(release_notebook("posenc")), as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = "import time\ntime.sleep(600)\n" + cell.source
    nbformat.write(notebook, str(path))
    return path


def wait_for(condition, what, timeout=300, then=str):
    """Wait until `condition()` is true (polled); fail saying `what` did not happen within `timeout` seconds, and
    what `then()` says at that moment."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s{then()}"
        time.sleep(0.05)


def test_a_grading_command_dies_with_a_killed_pytest(tmp_path):
    check = str(os.path.join(os.path.dirname(sys.executable), "posenc-check"))
    notebook = sleeping_notebook(tmp_path / "sleeping.ipynb")
    (tmp_path / "test_inner.py").write_text(INNER_TEST.format(check=check, notebook=str(notebook)))
    inner = children.popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_inner.py"],
                           cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen, started, kernel_folder = set(), set(), "no kernel folder yet"
    try:
        def grading_in_its_sandbox():
            """posenc-check runs under the inner pytest, its kernel in bwrap: the grading is under way."""
            seen.update(children.descendants(inner.pid))
            assert inner.poll() is None, "the inner pytest ended before it was killed"
            return any("bwrap" in children.command_line(pid) for pid in seen) and \
                any("posenc-check" in children.command_line(pid) for pid in seen)

        wait_for(grading_in_its_sandbox, "posenc-check's kernel started under the inner pytest")
        # Each process by its pid and start time: a pid that ends is soon another process's (a busy suite
        # starts hundreds a second, threads included, in Linux's 32768).
        started = {children.identity(pid) for pid in children.descendants(inner.pid)} - {None}
        # what starts later (the sandbox's processes) is told by the grader's kernel folder in its command line
        [grader] = [pid for pid, _ in started if check in children.command_line(pid).split()[:2]]  # its script
        kernel_folder = f"{KERNEL_FOLDER}{grader}-"
        inner.send_signal(signal.SIGKILL)
        inner.wait()

        def running():
            return children.still_running(started) + children.running_with(kernel_folder)

        wait_for(lambda: not running(), "the grading command and its kernel ended with the killed pytest",
                 timeout=60, then=lambda: f"; running still: {running()}")
    finally:
        for left in children.still_running(started) + children.running_with(kernel_folder):  # leave nothing running
            os.kill(int(left.split()[0]), signal.SIGKILL)
        if inner.poll() is None:
            inner.kill()
            inner.wait()
