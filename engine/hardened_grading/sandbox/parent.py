"""A kernel never outlives its grader: it dies with its parent, and watches the grader's pid."""

import os
import signal
import sys


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


def watch_grader(grader):
    """Before this launcher becomes bwrap: fork a watcher, outside the sandbox, that SIGKILLs it (bwrap, and with it
    the sandbox) as soon as the grader is gone.

    The launcher's parent-death signal is kept across ``exec``, and bwrap sets its own (``--die-with-parent``), but
    bwrap clears it while it starts, and a grader killed in that window would leave the sandbox running. The
    watcher closes the window: it holds a pidfd of the grader (Linux 5.3 and later; elsewhere, no watcher) and
    ends with the launcher (its own parent-death signal). Nothing of it is inside the sandbox: the student's code
    can neither see it nor use the pidfd.
    """
    try:
        pidfd = os.pidfd_open(grader)
    except (AttributeError, OSError):
        return
    if os.getppid() != grader:  # the grader died before the pidfd was opened: the pid may be another's
        os._exit(1)
    launcher = os.getpid()
    try:
        watcher = os.fork()
    except OSError:
        os.close(pidfd)
        return
    if watcher:
        os.close(pidfd)
        return
    try:  # the watcher
        import select

        die_with_parent(signal.SIGKILL)
        if os.getppid() == launcher:
            os.closerange(0, pidfd)
            os.closerange(pidfd + 1, 1024)
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            while not poller.poll():
                pass
            os.kill(launcher, signal.SIGKILL)  # bwrap, by now: the sandbox ends with it
    finally:
        os._exit(0)


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
