"""The grading kernel: an ordinary IPython kernel in a sandbox that sees and keeps only what it needs.

``nbgrader_config.py`` runs student code in the kernel ``hardened-grading``, whose command is this
module (:class:`GradingKernelSpecManager`). Started by the grader
(:class:`hardened_grading.preprocessors.execute.ResilientExecute`), it

- starts the kernel in a fresh bubblewrap sandbox (``bwrap``, Linux only), built from an allow-list:

  - no network at all (its own network namespace); the grader reaches the kernel over the ``ipc``
    transport, Unix sockets in a private folder made for this one kernel and bound into the sandbox;
  - read-only: the system's programs and libraries (``/usr`` and its links), the few files of
    ``/etc`` the dynamic linker needs, the Python environment and this package;
  - writable: the student's own folder (``autograded/STUDENT/ASSIGNMENT``) and a private ``/tmp``,
    a size-capped tmpfs that vanishes with the kernel;
  - nothing else: not the grader's home, not the course's private parts, not other students;
  - its own PID namespace: whatever the submission starts dies with its kernel;
  - no capabilities, a new session, a clean environment (of the grader's variables, only the harmless ones that
    ``ResilientExecute.inherited_environment`` names: :func:`sandbox_environment`);

- applies :class:`Limits`: processes and threads, CPU time per cell, file size, the private ``/tmp``,
  memory, and numpy's BLAS threads (output is capped on the grader's side);
- then starts ipykernel as usual.

The grader passes its settings as the kernel's extra arguments: ``--sandbox=MODE`` (one of
:data:`SANDBOX_MODES`; without it, ``require``: a kernel that cannot be sandboxed does not start,
and says what to do) and ``--limits=NAME=VALUE,...`` (:meth:`Limits.argument`).
"""

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
