"""Whether a process, named by its pid in a file or folder name it left, has ended (Linux: it reads ``/proc``), and
the killing of what a dead grader's kernel left running.

A grader killed outright cannot remove what it made (a kernel's private folder, a staging folder, a cgroup), so the
next run removes those of processes that have ended. A process that has exited but that its parent has not yet
reaped (a zombie: its parent was killed too, and the reaper that inherits it has not come to it) still has its
``/proc/PID``; it holds nothing any more, so it counts as ended.
"""

import os
import signal
from pathlib import Path


def ended(pid):
    """Whether the process `pid` (an int, or a string of digits) has ended: it has no ``/proc/PID``, or it is a
    zombie (state ``Z``) or dead (``X``), exited but not yet reaped.

    Examples
    --------
    >>> import os
    >>> ended(os.getpid())
    False
    """
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    except OSError:  # it exists, and /proc will not say more
        return False
    # "PID (COMM) STATE ...": COMM may hold spaces and parentheses, so the state follows the last ")"
    return stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"])


def kill_each(pids, belongs):
    """SIGKILL each of `pids` (ints, or strings of digits) for which ``belongs(pid)`` is true. Each is held by a
    pidfd while `belongs` reads about it (``/proc/PID/...``): a pid that ended meanwhile and was given to another
    process is not killed. A process that cannot be held, read or signalled is passed over."""
    for pid in pids:
        try:
            process = os.pidfd_open(int(pid))
        except (AttributeError, OSError):
            continue
        try:
            if belongs(pid):
                signal.pidfd_send_signal(process, signal.SIGKILL)
        except OSError:
            pass
        finally:
            os.close(process)
