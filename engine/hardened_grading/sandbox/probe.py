"""Whether a sandbox can be made on this machine: probed once per grading run, and said once."""

import atexit
import functools
import shutil
import subprocess
import sys
import tempfile

from ..judge.messages import elide
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
        return (f"bubblewrap is installed but cannot make a sandbox here ({elide(stderr, 200)}); "
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
