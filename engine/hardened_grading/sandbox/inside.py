"""What the kernel sets up inside the sandbox: its limits, CPU time per cell, and every stray process ended after a cell."""

import math
import os
import resource
import signal

from ..errors import CPUTimeLimitExceeded
from .limits import limit_memory


def apply_limits(limits):
    """Set this process's resource limits (inherited by what it starts); return the problems, if any."""
    problems = [limit_memory(limits.memory_mb)]
    for which, value in [(resource.RLIMIT_FSIZE, limits.file_mb * 2**20),
                         (resource.RLIMIT_CPU, limits.cpu_seconds_total)]:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError) as error:
            problems.append(f"a limit could not be set on this platform ({error})")
    return [p for p in problems if p]


def limit_cpu_per_cell(shell, seconds):
    """From now on, each cell `shell` runs may use `seconds` of CPU time, then gets CPUTimeLimitExceeded.

    The soft ``RLIMIT_CPU`` is moved to the CPU time used so far plus `seconds` before each execution;
    the hard limit (``Limits.cpu_seconds_total``) stays, and kills a process that goes on regardless.
    """
    running = [False]

    def cpu_used():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    def arm(*_):
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = math.ceil(cpu_used()) + seconds
        resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))

    def before():
        running[0] = True
        arm()

    def after():
        running[0] = False
        end_strays()

    def over_limit(signum, frame):
        if not running[0]:
            arm()  # between cells: nothing to stop
            return
        arm()  # one signal per cell
        raise CPUTimeLimitExceeded(f"this cell used more than {seconds} s of CPU time, the grading kernel's limit")

    signal.signal(signal.SIGXCPU, over_limit)
    shell.events.register("pre_execute", before)
    shell.events.register("post_execute", after)
    arm()


def end_strays():
    """Kill every process of the sandbox but its init and this kernel, and reap this kernel's children.

    Run after each cell: what a cell started (a detached child, a daemon, a fork bomb's copies) is gone
    before the next one, so it can neither watch the rest of the grading nor hold the process cap.
    Honest work leaves nothing running. Only inside the sandbox's own PID namespace.
    """
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (1, me):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
