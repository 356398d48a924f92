"""The time a kernel's code spent waiting for a CPU, which a test cell's time limit does not charge (Linux).

On a busy machine (a class graded on two cores, other graders beside it) the kernel's code is often ready to run
but waits its turn for a CPU, and so does the grader that carries the test's calls to it. A time limit in wall-clock
time charges the student for that wait: on a loaded CI machine the reference answers lost 2.76 of 72 points when a
test cell's calls ran past its limit. So a judged test cell is charged its wall-clock time less what the threads
that carry it waited for a CPU: the kernel's main thread, the grader's event loop and the thread that runs the
tests. Linux counts that wait per thread (``run_delay``, the second field of ``/proc/.../schedstat``).

An endless loop is stopped all the same: its CPU time is charged. A limit is never stretched beyond
:data:`MAX_STRETCH` times in wall-clock time, and the submission's own budget (``submission_seconds``) is
wall-clock time. Where the counts cannot be read (no ``/proc``, a kernel built without schedstats), nothing is
taken off: the limit is wall-clock time, as before.
"""

import os
import threading

#: The most a time limit is stretched in wall-clock time by the waits it does not charge.
MAX_STRETCH = 4


def run_delay(path):
    """Seconds the thread of `path` (a ``schedstat`` file) has waited for a CPU since it started, or None when it
    cannot be read (it ended, or there is no such file)."""
    try:
        with open(path) as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def this_thread():
    """The ``schedstat`` file of the calling thread."""
    return f"/proc/self/task/{threading.get_native_id()}/schedstat"


def charged(elapsed, waited):
    """The seconds charged for `elapsed` seconds of wall-clock time during which the cell's threads `waited` for a
    CPU: never less than ``elapsed / MAX_STRETCH``.

    Examples
    --------
    >>> charged(10.0, 0.0), charged(10.0, 6.0), charged(10.0, 9.5)
    (10.0, 4.0, 2.5)
    """
    return max(elapsed - max(waited, 0.0), elapsed / MAX_STRETCH)


def counter(*paths):
    """``(add, waited)``: ``add(path)`` counts the waits of the thread of `path` (a ``schedstat`` file) from now on
    (a path added twice, or None, is passed over); ``waited()`` is the seconds the threads added have waited for a CPU
    since each was added. `paths` are added at once. Safe to add from one thread while another reads."""
    since = {}

    def add(path):
        if path is not None and path not in since:
            start = run_delay(path)
            if start is not None:
                since[path] = start

    def waited():
        total = 0.0
        for path, start in list(since.items()):
            now = run_delay(path)
            total += max(0.0, now - start) if now is not None else 0.0
        return total

    for path in paths:
        add(path)
    return add, waited


def _children():
    """``{parent pid: [child pids]}`` of every process this one can see."""
    children = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as stat:
                    parent = int(stat.read().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    return children


def _name(pid):
    try:
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return None


def kernel_thread(pid):
    """The ``schedstat`` file of the main thread of the kernel that process `pid` runs (the process its kernel
    manager started: the engine's launcher, which becomes bubblewrap): the first process below `pid`, breadth first,
    that is not bubblewrap and whose parent is the sandbox's init (bubblewrap, a child of bubblewrap). A process the
    submission starts is the kernel's child, further down. `pid` itself when there is none (a kernel without the
    sandbox). None when `pid` is None or has ended."""
    if pid is None or run_delay(f"/proc/{pid}/schedstat") is None:
        return None
    children, level = _children(), [(None, pid)]  # (parent, process) pairs, one level of the tree at a time
    while level:
        below = [(above, parent, child) for above, parent in level for child in children.get(parent, ())]
        for above, parent, child in below:
            # bwrap (the launcher, which became it) starts the sandbox's init, bwrap again, whose child is the kernel
            if _name(above) == "bwrap" and _name(parent) == "bwrap" and _name(child) != "bwrap":
                return f"/proc/{child}/schedstat"
        level = [(parent, child) for _, parent, child in below]
    return f"/proc/{pid}/schedstat"
