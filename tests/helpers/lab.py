"""A JupyterLab that a test started, stopped with its kernels (tests/system/test_browser.py,
tests/system/test_inert_browser.py), and a Jupyter server with formgrader (tests/system/test_inert_browser.py,
tests/system/test_formgrader_browser.py)."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest


def stop_lab(process):
    """Stop JupyterLab as Ctrl-C does (it shuts its kernels down), then whatever is left of its group."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def formgrader_environment(private, environment):
    """`environment` (``nbgrader_env()``) with the instructor's set-up and Jupyter's own folders in `private`: a
    notebook trusted (``jupyter trust``) in it is trusted by :func:`formgrader_server` run in it."""
    from posenc_course.student.lab import instructor_environment

    return dict(instructor_environment(private, environment), JUPYTER_DATA_DIR=str(private / "data"),
                JUPYTER_RUNTIME_DIR=str(private / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(private / "settings"),
                JUPYTERLAB_WORKSPACES_DIR=str(private / "workspaces"))


@contextlib.contextmanager
def formgrader_server(course, environment, token):
    """A Jupyter server in the `course` folder with formgrader, in `environment` (:func:`formgrader_environment`), on
    the loopback with `token`; yield its base URL once formgrader answers for the course's ``posenc`` notebooks;
    stop it (and its kernels) at the end."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "jupyter", "server", "--no-browser", f"--port={port}",
                               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", "--allow-root",
                               "--ServerApp.ip=127.0.0.1"],
                              cwd=course, env=environment,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/formgrader/api/submitted_notebooks/posenc/exercises?token={token}",
                                       timeout=5).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("formgrader did not start:\n" + (server.communicate(timeout=5)[0] or "")[-3000:])
                time.sleep(0.3)
        yield base
    finally:
        stop_lab(server)  # as the student's JupyterLab is stopped
        server.communicate()


def chromium():
    """The path of a Chromium to drive (``POSENC_CHROMIUM``, else Debian's ``chromium``), or None."""
    for name in (os.environ.get("POSENC_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def skip_without_chromium():
    """Skip the test, saying how to install it, when there is no Chromium to drive."""
    if chromium() is None:
        pytest.skip("chromium is not installed (on Debian: sudo apt-get install chromium; make install does it "
                    "as root): the real-browser tests need it")


def screenshot_folder(tmp_path_factory):
    """Where a browser test keeps its screenshots: ``POSENC_SCREENSHOTS``, or a temporary folder of the session."""
    folder = Path(os.environ.get("POSENC_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
