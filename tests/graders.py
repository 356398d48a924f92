"""Who grades: root (``make demo``'s and CI's grader) or an unprivileged user (an instructor on a hub).

The attack suites (``tests/test_attacks_folder.py``, ``tests/test_hostile_output.py``) grade their class as each:
:func:`unprivileged` makes the user when this test runs as root, and gives it a Python it can run with the course
installed (:func:`python_for`); :func:`as_grader` runs a command as that user; :func:`hand_over` gives it the
course. When the tests run as an ordinary user, that user is the unprivileged grader, and root's run is skipped.
"""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from posenc_course.layout import ROOT

from .test_pythons import OUTER_MAKE

USER = "posenc-attack-grader"  #: the user that grades as on a hub (made when the tests run as root)
GRADERS = ("root", "unprivileged")


def shared_folder(prefix):
    """A new folder that every user can reach (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    return folder


def unprivileged_user():
    """The unprivileged grader's name, made if missing; None when this test cannot switch users (not root)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
                       check=True, capture_output=True)
    return USER


def python_for(user, folder):
    """A Python that `user` can run, with the course installed: this one, or, when they cannot reach it (a pyenv
    Python in root's home), the system's Python of the same version, installed in `folder` by the README's
    ``make install PYTHON=... VENV=...``, as an instructor on a hub installs it."""
    def runs(python):
        return subprocess.run(["runuser", "-u", user, "--", str(python), "-c", "import numpy, nbgrader"],
                              capture_output=True).returncode == 0
    if runs(sys.executable):
        return Path(sys.executable)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = next((p for p in (Path("/usr/bin") / version, Path("/usr/local/bin") / version) if p.exists()), None)
    if base is None:
        pytest.skip(f"{user} cannot run {sys.executable}, and there is no /usr/bin/{version} to grade with")
    venv = folder / "grader-venv"
    env = {k: v for k, v in os.environ.items() if k not in OUTER_MAKE}
    made = subprocess.run(["make", "install", f"PYTHON={base}", f"VENV={venv}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert made.returncode == 0, made.stdout + made.stderr
    python = venv / "bin" / "python"
    assert runs(python), f"{user} cannot run {python}"
    return python


def unprivileged():
    """A context of ``(user, python)`` for the unprivileged grader: this test's own user and Python when it is not
    root. Use as a module fixture's body."""
    user = unprivileged_user()
    if user is None:
        yield None, sys.executable
        return
    folder = shared_folder("posenc-grader-python-")
    try:
        yield user, str(python_for(user, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def hand_over(root, user, keep=()):
    """Make `user` (None: nobody) the owner of everything under `root`, but what is under the folders `keep`."""
    if user is None:
        return
    owner = pwd.getpwnam(user)
    for path in [root, *root.rglob("*")]:
        if not any(path != folder and path.is_relative_to(folder) for folder in keep):
            os.lchown(path, owner.pw_uid, owner.pw_gid)


def as_grader(user, command, cwd, env, timeout):
    """Run `command` as `user` (None: this process's user), as the grader runs it; return the CompletedProcess."""
    prefix = [] if user is None else ["runuser", "-u", user, "--", "env", *(f"{k}={v}" for k, v in env.items())]
    return subprocess.run([*prefix, *command], cwd=cwd, env=env if user is None else None, capture_output=True,
                          text=True, timeout=timeout)
