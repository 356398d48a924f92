"""Which submissions a live grading run is grading: a lock per submission, let go by the kernel when its run ends.

A run of ``nbgrader autograde`` (a ``hardened-grade`` worker is one: it runs nbgrader's Autograde) holds an
exclusive OS lock (``flock``) on a submission's lock file while it grades that submission: from before nbgrader
looks at the graded folder, ``autograded/STUDENT/ASSIGNMENT``, until the folder is marked graded
(:func:`hardened_grading.hooks.submission.mark_graded`) or the run gives up on it
(:func:`hardened_grading.hooks.unfinished.lock_submissions_while_graded`). The operating system lets the lock go when
the process ends, however it ends (Ctrl-C, SIGKILL, a crash, a reboot), and only then: the kernels a run starts
never hold it (the file is opened close-on-exec). So:

- a graded folder without its done-marker whose lock nobody holds was left by a run that ended part-way: the
  clean-up removes it (:func:`hardened_grading.hooks.unfinished.remove_unfinished`); one whose lock is held is being
  graded by a live run, of whichever assignment and by whichever command, and is left alone;
- a second run that comes to a submission another run is grading waits for the first to let go, saying for
  whom it waits, then goes on as nbgrader does: it skips the submission as graded, or grades it again with
  ``--force``.

The lock file, ``autograded/STUDENT/.hardened-grading-lock-ASSIGNMENT``, lies beside the graded folder, never in
it: the grading kernel's sandbox binds the graded folder alone, so student code cannot reach the file, and
nothing copies it (feedback is made from the graded folder; nbgrader's globs skip names that start with a dot).
It holds the holder's pid, machine and start time, for the messages of those who wait. Lock files are never
removed (one removed while a run waits on it would let the next run lock a new file while the first holds the
old one): one empty file per graded submission.
"""

import fcntl
import os
import socket
import time
from pathlib import Path

#: The start of a submission's lock file's name, in ``autograded/STUDENT/``; then the assignment.
PREFIX = ".hardened-grading-lock-"

_held = {}  #: this process's locks: real path of the lock file -> its open file descriptor


def lock_file(folder):
    """The lock file of the graded folder `folder` (``autograded/STUDENT/ASSIGNMENT``): beside it, in the student's
    ``autograded/STUDENT/``."""
    folder = Path(folder)
    return folder.parent / f"{PREFIX}{folder.name}"


def _open(path):
    """Open the lock file `path`, made (and its folder) if missing, never through a link, close-on-exec (a kernel
    this process starts never holds the lock). Read and write when it may, else read only (a file another grader
    made: ``flock`` needs no more); return the file descriptor."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, flags | os.O_RDWR, 0o666)
    except PermissionError:
        return os.open(path, flags | os.O_RDONLY)


def try_lock(path):
    """Lock the lock file `path` if no process holds it; return its file descriptor (:func:`release` lets it go),
    or None when another process (or another descriptor of this one) holds it. An OSError when the file cannot
    be made or locked (a file system without locks) is raised."""
    fd = _open(Path(path))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    _say_holder(fd)
    return fd


def wait_for_lock(path, on_wait=None):
    """Lock the lock file `path`, waiting for its holder to let go; ``on_wait(holder)`` (:func:`holder`) is called
    first when it is held. Return the file descriptor."""
    fd = _open(Path(path))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait(holder(path))
            fcntl.flock(fd, fcntl.LOCK_EX)  # until the holder lets go, or ends
    except BaseException:
        os.close(fd)
        raise
    _say_holder(fd)
    return fd


def release(fd):
    """Let go of the lock held through `fd` (:func:`try_lock`, :func:`wait_for_lock`), its holder's note wiped."""
    try:
        os.ftruncate(fd, 0)
    except OSError:  # opened read-only
        pass
    os.close(fd)


def _say_holder(fd):
    """Write who holds the lock into its file (when it may), for :func:`holder`."""
    note = f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, note.encode(), 0)
    except OSError:
        pass


def holder(path):
    """Who holds the lock file `path`, as its holder wrote it (``pid N on HOST, since TIME``); "" if unknown."""
    try:
        with open(path, "rb") as stream:
            text = stream.read(200).decode("utf-8", "replace")
    except OSError:
        return ""
    return text.splitlines()[0].strip() if text.strip() else ""


# This process's locks, one per submission it grades --------------------------------------------------------

def hold(path, on_wait=None):
    """Hold the lock file `path` for this process (:func:`wait_for_lock`) until :func:`let_go` or
    :func:`let_go_all`. One already held is kept."""
    key = os.path.realpath(path)
    if key not in _held:
        _held[key] = wait_for_lock(path, on_wait)


def holds(path):
    """Whether this process holds the lock file `path` (:func:`hold`)."""
    return os.path.realpath(path) in _held


def let_go(path):
    """Let go of the lock file `path`, if this process holds it."""
    fd = _held.pop(os.path.realpath(path), None)
    if fd is not None:
        release(fd)


def let_go_all():
    """Let go of every lock this process holds."""
    for key in list(_held):
        release(_held.pop(key))
