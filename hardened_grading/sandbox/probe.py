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

import atexit
import functools
import shutil
import subprocess
import sys
import tempfile

from .cgroup import process_cap_problem, remove_stale_cgroups

SANDBOX_ADVICE = ("To grade, use Linux with bubblewrap (sudo apt-get install bubblewrap on Debian or Ubuntu, "
                  "sudo dnf install bubblewrap on Fedora; `make install` installs it when run as root), or, "
                  "only for submissions you trust, set c.ResilientExecute.sandbox = 'off' in nbgrader_config.py "
                  "(docs/install.md: Platforms).")



#: What grading without the sandbox means, said once per run where it happens.
UNSANDBOXED_MEANS = ("student code runs with your own permissions: it can read your files (your home folder, "
                     "the course's hidden tests and gradebook), use the network, and leave processes running")



# Every feature the sandbox uses, tried once: an old bubblewrap, or a machine without user namespaces, fails here.
_TRIAL = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL",
          "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--size", str(2**20), "--tmpfs", "/tmp", "true"]



#: Seconds the sandbox probe may take before it is taken as slow (a busy machine), not as failed.
PROBE_SECONDS = 30



def sandbox_problem(seconds=PROBE_SECONDS):
    """None when bubblewrap can sandbox a kernel here (or its probe is only slow); otherwise why not, in a few words.

    The probe is the sandbox's every feature, tried once. It writes to a file, not a pipe: nothing waits on
    a pipe that a stuck child holds open. One that runs over `seconds` is killed, and the machine is taken
    as busy, not as lacking the sandbox: a busy machine never makes the grader refuse to grade. (If bwrap
    really hangs here, each kernel fails to start, and each submission says so.)
    """
    if not sys.platform.startswith("linux"):
        return f"bubblewrap, the grading sandbox, exists only on Linux, and this is {sys.platform}"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap), the grading sandbox, is not installed"
    with tempfile.TemporaryFile() as said:
        try:
            trial = subprocess.Popen(_TRIAL, stdin=subprocess.DEVNULL, stdout=said, stderr=said)
        except OSError as error:
            return f"bubblewrap is installed but could not be run ({error})"
        try:
            code = trial.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            trial.kill()  # --die-with-parent: its child goes too
            trial.wait()
            print(f"hardened_grading kernel: the sandbox probe took over {seconds} s (a busy machine?); going on with the "
                  "sandbox", file=sys.stderr)
            return None
        said.seek(0)
        stderr = said.read().decode(errors="replace")
    if code != 0:
        return (f"bubblewrap is installed but cannot make a sandbox here ({' '.join(stderr.split())[:200]}); "
                "it needs unprivileged user namespaces, or root, and bubblewrap 0.8 or newer")
    return None




@functools.lru_cache(maxsize=1)
def _process_cap_problem():
    """:func:`hardened_grading.sandbox.cgroup.process_cap_problem`, found once per grading run; the kernels' empty
    cgroups are removed after each kernel and when the run ends."""
    atexit.register(remove_stale_cgroups)
    return process_cap_problem()



@functools.lru_cache(maxsize=1)
def _sandbox_problem():
    """:func:`hardened_grading.sandbox.probe.sandbox_problem`, found once per grading run."""
    return sandbox_problem()
