"""The grading commands the tests start, made to die with the test's process.

A test that starts ``nbgrader autograde``, ``posenc-grade`` or ``posenc-check`` waits for it; if pytest itself is
killed (SIGKILL, an out-of-memory kill, a CI timeout), nothing waits any more, and the command went on grading, its
kernels with it. Each command started here has Linux's parent-death signal set to SIGKILL before it runs
(``prctl(PR_SET_PDEATHSIG)``, kept across ``exec``, as the engine's
:func:`hardened_grading.sandbox.parent.die_with_parent` sets it for a kernel): it is killed when the test's process
dies, and its kernels end with it, as the engine's do with a killed grader.

The signal is sent when the *thread* that started the command ends: start a command from a thread that outlives
it (``run`` waits in its own thread, as ``subprocess.run`` does).
"""

import ctypes
import os
import signal
import subprocess
import sys

from hardened_grading.nbgrader_app import nbgrader_env

PR_SET_PDEATHSIG = 1  #: prctl's option (linux/prctl.h)
#: Linux's prctl, found here, once: the child between fork and exec runs no import (another thread of the test's
#: process may have held the import lock when it forked).
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def dying_with_this_process(then=None):
    """A ``preexec_fn`` for subprocess: the child dies (SIGKILL) with the process that starts it, and at once if that
    process died before the child could ask for it; then it calls `then` (the caller's own ``preexec_fn``), if
    given. It fails the start (SubprocessError) where prctl does."""
    parent = os.getpid()

    def in_the_child():
        if _PRCTL(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed: the command would outlive pytest")
        if os.getppid() != parent:  # the test's process is gone already: no signal would come
            os._exit(1)
        if then is not None:
            then()

    return in_the_child


def run(command, preexec_fn=None, **options):
    """``subprocess.run(command, **options)``, the command dying with this process (after it, `preexec_fn`)."""
    return subprocess.run(command, preexec_fn=dying_with_this_process(preexec_fn), **options)


def popen(command, preexec_fn=None, **options):
    """``subprocess.Popen(command, **options)``, the command dying with this process (after it, `preexec_fn`)."""
    return subprocess.Popen(command, preexec_fn=dying_with_this_process(preexec_fn), **options)


def run_nbgrader(cwd, *args, env=None, capture=True, timeout=1800):
    """``nbgrader ARGS`` in `cwd` with this Python, as :func:`hardened_grading.nbgrader_app.run_nbgrader` runs it,
    dying with this process; return the CompletedProcess (its output as text with `capture`)."""
    return run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env or nbgrader_env(),
               capture_output=capture, text=True, timeout=timeout)


def descendants(pid):
    """The pids of `pid`'s children, theirs, and so on, as /proc says now."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:  # ended while listed
                continue
            parents[int(entry)] = int(stat.rpartition(")")[2].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def identity(pid):
    """`pid`'s start time (in clock ticks after boot) with its pid, as /proc says now: a pid that Linux has given to
    a new process after the first one ended (``pid_max`` is 32768 here) has another identity. None once it has
    ended, or is a zombie.

    Examples
    --------
    >>> identity(os.getpid()) == identity(os.getpid()) != None
    True
    """
    try:
        fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else (pid, int(fields[19]))


def still_running(identities):
    """Those of `identities` (from :func:`identity`) whose process runs still, each with its state and command
    line, for a failure's message."""
    return [f"{pid} ({command_line(pid)!r}, {_state(pid)})" for pid, started in identities
            if identity(pid) == (pid, started)]


def running_with(text):
    """Processes (as :func:`still_running` says them) whose command line holds `text`, this one left out: those a
    snapshot of a tree missed, started after it (a kernel's sandbox, in its folder)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid() and text in command_line(entry):
            found.add(identity(int(entry)))
    return still_running(found - {None})


def _state(pid):
    """`pid`'s state, parent and the kernel function it waits in, as /proc says (for a failure's message)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
        wchan = open(f"/proc/{pid}/wchan").read()
    except OSError:
        return "ended"
    return f"state {fields[0]}, parent {fields[1]}, waiting in {wchan or '-'}"


def command_line(pid):
    """`pid`'s command line, its arguments joined by spaces; "" once it has ended."""
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
