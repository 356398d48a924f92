"""Who grades: root (``make demo``'s and CI's grader) or an unprivileged user (an instructor on a hub).

The attack suites grade their class as each. :func:`unprivileged` makes the user when the tests run as root, and
gives it a Python it can run with the course installed (:func:`python_for`); :func:`as_grader` runs a command as
that user (``setpriv``, with :func:`grader_env`); :func:`hand_over` gives it the course. When the tests run as an
ordinary user, that user is the unprivileged grader, and root's run is skipped.
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

from . import children
from .repository import OUTER_MAKE

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
    def runs(python):  # and starts itself again, as nbgrader starts kernels (setpriv's exec alone may reach it)
        probe = "import numpy, nbgrader, subprocess, sys; subprocess.run([sys.executable, '-c', ''], check=True)"
        return subprocess.run(grader_command(user, [str(python), "-c", probe]), capture_output=True).returncode == 0
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


def graded_as(who, request, name, grade, *arguments):
    """The body of a module fixture that grades a class as `who` (one of :data:`GRADERS`): ``grade(root, user,
    python, *arguments)`` in a new folder of its own (`name` in its name), removed afterwards. Root's run is
    skipped when the tests do not run as root; the unprivileged grader is the ``unprivileged_grader`` fixture."""
    if who == "root" and os.geteuid() != 0:
        pytest.skip("grading as root needs this test to run as root (CI and make demo do)")
    user, python = (None, sys.executable) if who == "root" else request.getfixturevalue("unprivileged_grader")
    root = shared_folder(f"posenc-{name}-{who}-")
    try:
        yield grade(root, user, python, *arguments)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def hand_over(root, user, keep=()):
    """Make `user` (None: nobody) the owner of everything under `root`, but what is under the folders `keep`."""
    if user is None:
        return
    owner = pwd.getpwnam(user)
    for path in [root, *root.rglob("*")]:
        if not any(path != folder and path.is_relative_to(folder) for folder in keep):
            os.lchown(path, owner.pw_uid, owner.pw_gid)


def grader_command(user, command):
    """`command`, run as `user` (None: this process's user). ``setpriv`` runs it in place (an exec, no child), so its
    pid is the grader's own, which names the kernels' folders it makes."""
    if user is None:
        return list(command)
    return ["setpriv", f"--reuid={user}", f"--regid={pwd.getpwnam(user).pw_gid}", "--init-groups", *command]


def grader_env(user, env):
    """`env`, with `user`'s name where a program looks for its user's (``getpass.getuser``)."""
    return env if user is None else {**env, "USER": user, "LOGNAME": user}


def as_grader(user, command, cwd, env, timeout):
    """Run `command` as `user` (None: this process's user), as the grader runs it, with the environment `env`;
    return the CompletedProcess."""
    return children.run(grader_command(user, command), cwd=cwd, env=grader_env(user, env), capture_output=True,
                        text=True, timeout=timeout)
