"""The next submission's kernel, started while this one is graded.

A grading worker (:mod:`hardened_grading.class_grading`) knows which student it grades next, and says so with
:func:`expect`. As soon as the kernel of the submission it is grading answers,
:class:`hardened_grading.preprocessors.execute.ResilientExecute` calls :func:`start`: the next submission's kernel starts,
in a sandbox of its own, while this submission's cells run. When nbgrader then grades the next submission
and asks for its kernel, :func:`take` hands that kernel over, already up (or nearly), instead of a new one.

The kernel starts before its student's folder exists: nbgrader makes ``autograded/STUDENT/ASSIGNMENT`` only
when it grades that student, and removes it first on ``--force``. So it is started in a private, empty
staging folder (``autograded/.ahead-HOST-PID-RANDOM``), which its sandbox binds where the student's folder
will be (``--student-folder``, :func:`hardened_grading.sandbox.bwrap.sandbox_command`). :func:`take` moves what
nbgrader put in the student's folder into the staging folder, and renames the staging folder to the student's
folder: the sandbox's bind follows the folder, so the kernel finds the files in its working folder, at its
real path.

Isolation is the same as a kernel started when needed: one fresh sandbox per submission, bound to that
submission's folder alone; the staging folder is made for it and holds nothing else. One thing differs: the
student's files arrive after the kernel has started, so a file beside the notebook that shadows a module the
kernel imports as it starts (a ``json.py``) no longer breaks its start; it shadows only modules the kernel has
not imported yet.

A kernel started ahead that is not taken (the next student was skipped, or graded by another worker) is shut
down by :func:`discard`, which the worker calls after each submission and when it ends. One that does not
answer is replaced by a kernel started as usual (``ResilientExecute``). A worker killed outright takes its
kernels with it (they are bound to it: :func:`hardened_grading.sandbox.parent.bind_to_grader`); the staging folders
it leaves are removed by the next run (:func:`remove_staging_folders`).
"""

import os
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import processes
from ..logs import log

#: The start of a staging folder's name, in the course's ``autograded/``: then :func:`owner` and random letters.
#: A dot first: nbgrader's globs (``autograded/*/ASSIGNMENT``) never see it as a student.
STAGING = ".ahead-"


def owner(pid=None):
    """``HOST-PID-`` of the worker `pid` (this process by default) on this machine: the part of a staging folder's
    name that says whose it is (shards on several machines may share the course folder)."""
    return f"{socket.gethostname()}-{pid or os.getpid()}-"


@dataclass
class Started:
    """A kernel started ahead, for `folder`."""

    folder: str  #: the student's folder it is for (absolute; it may not exist yet)
    kernel_name: str
    arguments: tuple  #: the grading kernel's arguments (``ResilientExecute.kernel_arguments``)
    km: object  #: its jupyter_client kernel manager
    connection_folder: str  #: its private ipc folder
    staging: str  #: its working folder until :func:`take`


_expected = None  #: the folder of the next submission this process grades, or None
_started = None  #: the Started kernel, or None


def expect(folder):
    """Say which student's folder (``autograded/STUDENT/ASSIGNMENT``) this process grades next; None: none."""
    global _expected
    _expected = os.path.realpath(folder) if folder else None


def expected():
    """The folder :func:`expect` last said, if no kernel was started for it yet; else None."""
    if _expected is None or (_started is not None and _started.folder == _expected):
        return None
    return _expected


async def start(new_kernel_manager, kernel_name, arguments):
    """Start the expected submission's kernel, if there is one and none is started for it yet.

    `new_kernel_manager()` makes a kernel manager and its private ipc folder (as ``ResilientExecute`` does for its
    own kernels); `arguments` are the grading kernel's. Return the Started kernel, or None. A kernel that cannot be
    started is not an error: the submission's kernel will be started when it is needed.
    """
    global _started
    folder = expected()
    if folder is None:
        return None
    discard()
    autograded = Path(folder).parents[1]
    km = connection_folder = staging = None
    try:
        autograded.mkdir(parents=True, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=STAGING + owner(), dir=autograded)
        os.chmod(staging, 0o777 & ~_umask())  # it becomes the student's folder: as nbgrader's makedirs makes it
        km, connection_folder = new_kernel_manager()
        await km.start_kernel(extra_arguments=[*arguments, f"--student-folder={folder}"], cwd=staging)
    except Exception as error:  # a full disk, a bad course folder: it is only an optimisation
        log.warning("hardened_grading: the next kernel could not be started ahead (%s: %s); it starts when needed",
                    type(error).__name__, error)
        _remove(km, connection_folder, staging)
        return None
    _started = Started(folder, kernel_name, tuple(arguments), km, connection_folder, staging)
    return _started


def _umask():
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def take(folder, kernel_name, arguments):
    """The kernel started ahead for `folder` with these `kernel_name` and `arguments`, with the files of `folder`
    (made by nbgrader) now in its working folder, which is now `folder`; None if there is none (or it has ended).

    Return ``(km, connection_folder)``: the caller owns them from now on, and shuts the kernel down as its own.
    """
    global _started
    found = _started
    if found is None or found.folder != os.path.realpath(folder) or found.kernel_name != kernel_name \
            or found.arguments != tuple(arguments):
        return None
    _started = None
    try:
        alive = found.km.has_kernel and found.km.provisioner.process.poll() is None  # not died while it waited
        if alive:
            _move_into(found.staging, found.folder)
    except Exception as error:
        log.warning("hardened_grading: the kernel started ahead for %s could not be used (%s: %s); a new one starts",
                    folder, type(error).__name__, error)
        alive = False
    if not alive:
        _remove(found.km, found.connection_folder, found.staging)
        return None
    # Its restarts (a cell that kills the kernel) start in the student's folder, as any kernel's do.
    found.km._launch_args.update(cwd=found.folder, extra_arguments=list(arguments))
    return found.km, found.connection_folder


def _move_into(staging, folder):
    """Move what is in `folder` into `staging`, then put `staging` in its place (same file system: renames). If a
    step fails, what was moved goes back to `folder`, and the error is raised: nothing of the student's is lost."""
    moved = []
    try:
        for entry in os.listdir(folder):
            os.rename(os.path.join(folder, entry), os.path.join(staging, entry))
            moved.append(entry)
        os.rmdir(folder)
        os.rename(staging, folder)
    except BaseException:
        if os.path.isdir(staging):  # not renamed: the student's files go back where nbgrader put them
            os.makedirs(folder, exist_ok=True)
            for entry in moved:
                os.rename(os.path.join(staging, entry), os.path.join(folder, entry))
        raise


def discard(keep=None):
    """Shut down the kernel started ahead, if any and not for the folder `keep`, and remove its folders."""
    global _started
    if _started is None or (keep is not None and _started.folder == os.path.realpath(keep)):
        return
    found, _started = _started, None
    _remove(found.km, found.connection_folder, found.staging)


def _remove(km, connection_folder, staging):
    """End a kernel started ahead (plainly: it is not running a cell) and remove its folders. Synchronous, as the
    callers are (nbclient asks for a kernel manager outside its coroutines)."""
    process = getattr(getattr(km, "provisioner", None), "process", None)
    if process is not None and process.poll() is None:
        process.kill()  # bwrap (the launcher becomes it): its sandbox, and the kernel, end with it
        process.wait()
    close = getattr(km, "_close_control_socket", None)
    if close is not None:
        close()
    for path in (connection_folder, staging):
        if path:
            shutil.rmtree(path, ignore_errors=True)


def remove_staging_folders(course, pid=None):
    """Remove the staging folders in `course`'s ``autograded/`` of this machine's workers that are gone, or, given
    `pid`, that worker's. Another machine's are left alone."""
    for path in Path(course).glob(f"autograded/{STAGING}{socket.gethostname()}-*-*"):
        worker = path.name.removeprefix(STAGING + socket.gethostname() + "-").partition("-")[0]
        if worker.isdigit() and (int(worker) == pid if pid is not None else processes.ended(worker)):
            shutil.rmtree(path, ignore_errors=True)
