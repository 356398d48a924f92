"""A kernel never outlives its grader: it dies with its parent, and watches the grader's pid."""

import os
import signal
import sys

from .. import processes


def die_with_parent(signum=signal.SIGKILL):
    """Have the kernel (Linux's) send this process `signum` when its parent dies, even by SIGKILL. It is
    kept across ``exec``: bwrap's outer process, killed so, ends the sandbox and its PID namespace
    (``--die-with-parent``); a grading worker (:mod:`hardened_grading.class_grading`), sent SIGTERM, stops its
    kernel on the way out."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def watch_grader(grader, folder=None):
    """Before this launcher becomes bwrap: fork a watcher, outside the sandbox, that SIGKILLs the kernel (bwrap, the
    sandbox's first process, the output relay) as soon as the grader is gone.

    The launcher's parent-death signal is kept across ``exec``, and bwrap sets its own (``--die-with-parent``), but
    bwrap clears it while it starts, and so does the sandbox's first process, bwrap's child, until it sets its own:
    a grader killed in that window would leave the sandbox running, its kernel waiting forever for a grader that
    never comes. The watcher closes the window. It holds pidfds of the grader and of this launcher (Linux 5.3 and
    later; elsewhere, no watcher). When the grader ends, it kills every process whose command line names the
    kernel's own `folder` (its connection folder, bound into the sandbox: bwrap's arguments name it, and bwrap's
    child, in a session of its own, has them too), then the launcher's process group (jupyter_client starts a
    kernel as a session of its own, and ends it so too). When the launcher ends first (its kernel was shut down),
    the watcher ends. Nothing of it is inside the sandbox: the student's code can neither see it nor use the pidfds.
    """
    try:
        pidfd = os.pidfd_open(grader)
    except (AttributeError, OSError):
        return
    if os.getppid() != grader:  # the grader died before the pidfd was opened: the pid may be another's
        os._exit(1)
    launcher = os.getpid()
    try:
        launcher_fd = os.pidfd_open(launcher)
    except OSError:
        os.close(pidfd)
        return
    try:
        watcher = os.fork()
    except OSError:
        watcher = None
    if watcher != 0:  # the launcher (the fork failed: no watcher)
        os.close(pidfd)
        os.close(launcher_fd)
        return
    try:  # the watcher
        _watch(pidfd, launcher_fd, launcher, folder)
    finally:
        os._exit(0)


def _watch(grader_fd, launcher_fd, launcher, folder):
    """The watcher's life (:func:`watch_grader`): wait for the grader or the launcher to end; if the grader has
    ended, kill the processes that name the kernel's `folder`, then the launcher's process group."""
    import select

    kept = sorted((grader_fd, launcher_fd))
    os.closerange(0, kept[0])
    os.closerange(kept[0] + 1, kept[1])
    os.closerange(kept[1] + 1, 1024)
    poller = select.poll()
    poller.register(grader_fd, select.POLLIN)
    poller.register(launcher_fd, select.POLLIN)
    ready = set()
    while not ready:
        ready = {fd for fd, _ in poller.poll()}
    if grader_fd not in ready:
        # The launcher ended first: its kernel was shut down, or a parent-death signal killed it as its grader died,
        # in which case the grader's pidfd is readable a moment later.
        grader_poller = select.poll()
        grader_poller.register(grader_fd, select.POLLIN)
        if not grader_poller.poll(GRADER_END_MS):
            return
    if folder is not None:
        kill_naming(folder)
    if os.getpgid(0) == launcher:  # the launcher leads its process group, as jupyter_client starts a kernel
        os.killpg(launcher, signal.SIGKILL)  # this watcher is in it, and ends with it
    else:  # through its pidfd: its pid may be another process's by now
        signal.pidfd_send_signal(launcher_fd, signal.SIGKILL)


def kill_naming(folder):
    """SIGKILL every process (this one left out) that has `folder`, or a path in it, as an argument
    (:func:`hardened_grading.processes.kill_each`: a pid given to another process meanwhile is not killed)."""
    folder = os.fsencode(folder)

    def names_it(pid):
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            arguments = file.read().split(b"\0")
        return any(argument == folder or argument.startswith(folder + b"/") for argument in arguments)

    processes.kill_each([entry for entry in os.listdir("/proc") if entry.isdigit() and int(entry) != os.getpid()],
                        names_it)


#: How long the watcher waits, once its launcher has ended, for its grader's end to show (milliseconds): a grader
#: that dies has its kernel's launcher killed (the parent-death signal) before the grader's own pidfd is readable.
GRADER_END_MS = 200


def bind_to_grader(grader):
    """End this kernel with the process that started it, even if that one is SIGKILLed; exit at once if
    it is already gone.

    Done first, before the sandbox probe and the ``exec`` of bwrap: a grader killed while its kernel is
    starting (the worst moment) leaves no kernel behind, waiting forever for a grader that never comes.
    `grader` is the pid the grader gave (``--grader-pid``); without it, a parent that is already init is
    taken as gone.
    """
    die_with_parent(signal.SIGKILL)
    parent = os.getppid()
    orphaned = parent != grader if grader is not None else parent == 1
    if orphaned:
        os._exit(1)  # the grader died before the signal was set: nobody will ever connect
