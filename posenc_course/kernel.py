"""The grading kernel: an ordinary IPython kernel, sandboxed and under a memory limit.

``nbgrader_config.py`` runs student code in the kernel spec ``posenc-grader``, whose command is
this module. It

- starts the kernel inside a bubblewrap sandbox (``bwrap``, Linux only): the file system is
  read-only, and the course's private parts (``source/``, ``gradebook.db``, other students'
  submissions and graded notebooks, feedback, the tests and the reference package
  ``posenc_solutions``) are hidden, so student code can neither read them nor import the reference
  solutions;
- caps the kernel's address space, so that a memory bomb raises ``MemoryError`` in the student's
  cell instead of exhausting the machine;
- then starts ipykernel as usual.

The grader passes its settings (``ResilientExecute.sandbox`` and ``ResilientExecute.memory_mb``,
traitlets of :mod:`posenc_course.grading`) as the kernel's extra arguments ``--sandbox=MODE`` and
``--memory-mb=N``. MODE is one of :data:`SANDBOX_MODES`; without the argument it is ``require``:
a kernel that cannot be sandboxed does not start, and says what to do.

    python -m posenc_course.kernel install     # write the kernel spec into this environment
"""

import importlib.util
import json
import os
import resource
import runpy
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .layout import course_root

KERNEL_NAME = "posenc-grader"
DEFAULT_MEMORY_MB = 3072
# require: no sandbox, no kernel (grading a class); if-available: sandboxed where bubblewrap works,
# else plain (posenc-check: a learner's own notebook); off: never sandboxed (trusted submissions).
SANDBOX_MODES = ("require", "if-available", "off")


def limit_memory(megabytes):
    """Cap this process's address space; return None, or why it could not be done."""
    limit = int(megabytes) * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError) as error:  # macOS does not enforce RLIMIT_AS, and may refuse it
        return f"the kernel's memory limit could not be set on this platform ({error})"
    return None


SANDBOX_ADVICE = ("To grade, use Linux with bubblewrap (sudo apt-get install bubblewrap on Debian or Ubuntu, "
                  "sudo dnf install bubblewrap on Fedora; `make install` installs it when run as root), or, "
                  "only for submissions you trust, set c.ResilientExecute.sandbox = 'off' in nbgrader_config.py "
                  "(README: Platforms).")


def sandbox_problem():
    """None when bubblewrap can sandbox a kernel here; otherwise why not, in a few words."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap, the grading sandbox, exists only on Linux, and this is {sys.platform}"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap), the grading sandbox, is not installed"
    try:
        trial = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap is installed but could not be run ({error})"
    if trial.returncode != 0:
        return (f"bubblewrap is installed but cannot make a sandbox here ({' '.join(trial.stderr.split())[:200]}); "
                "it needs unprivileged user namespaces, or root")
    return None


def install(prefix=sys.prefix):
    """Write the kernel spec under ``PREFIX/share/jupyter/kernels``; return its folder."""
    folder = Path(prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "posenc_course.kernel", "-f", "{connection_file}"],
        "display_name": "Python 3 (posenc grading, memory-limited)",
        "language": "python",
        "interrupt_mode": "message",  # a signal would reach bwrap, not the kernel
        "metadata": {"debugger": False},
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    return folder


def ensure_installed():
    """Install the kernel spec into this environment unless it is there already."""
    if not (Path(sys.prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME / "kernel.json").exists():
        install()


PRIVATE = ("source", "authoring", "submitted", "autograded", "feedback", "tests", ".git", "nbgrader_config.py")


def sandbox_command(cwd):
    """The ``bwrap`` arguments that hide the course's private parts from a kernel run in `cwd`."""
    scratch = tempfile.mkdtemp(prefix="posenc-kernel-")
    args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--die-with-parent",
            "--bind", "/tmp", "/tmp", "--setenv", "IPYTHONDIR", scratch, "--setenv", "MPLCONFIGDIR", scratch,
            "--setenv", "POSENC_IN_SANDBOX", "1"]
    root = course_root(cwd)
    # /tmp is writable, so the course, this package and the Python environment are made
    # read-only again in case they live under it.
    for path in {root, Path(__file__).resolve().parents[1], Path(sys.prefix).resolve()}:
        args += ["--ro-bind", str(path), str(path)]
    hidden = [root / name for name in PRIVATE] + [root / "gradebook.db"]
    spec = importlib.util.find_spec("posenc_solutions")
    if spec is not None and spec.origin:
        hidden.append(Path(spec.origin).parent)
    for path in hidden:
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    # A kernel started in a student's own folder (inside autograded/) may write there; anywhere
    # else in the course its working folder stays read-only.
    if (root / "autograded") in cwd.parents:
        args += ["--bind", str(cwd), str(cwd)]
    return args + ["--chdir", str(cwd)]


def parse_options(argv):
    """``(sandbox mode, memory in MB, the other arguments)`` of the kernel's command line."""
    mode, memory_mb, rest = "require", DEFAULT_MEMORY_MB, []
    for arg in argv:
        if arg.startswith("--sandbox="):
            mode = arg.partition("=")[2]
            if mode not in SANDBOX_MODES:
                sys.exit(f"posenc-grader: --sandbox={mode}: it must be one of {', '.join(SANDBOX_MODES)}")
        elif arg.startswith("--memory-mb="):
            memory_mb = int(arg.partition("=")[2])
        else:
            rest.append(arg)
    return mode, memory_mb, rest


def main():
    if sys.argv[1:2] == ["install"]:
        print(f"installed kernel spec {KERNEL_NAME} in {install()}")
        return
    mode, memory_mb, kernel_args = parse_options(sys.argv[1:])
    if mode != "off" and not os.environ.get("POSENC_IN_SANDBOX"):
        problem = sandbox_problem()
        if problem is None:
            command = sandbox_command(Path.cwd()) + [sys.executable, "-m", "posenc_course.kernel", *sys.argv[1:]]
            os.execvp(command[0], command)
        if mode == "require":
            sys.exit(f"posenc-grader: not started: {problem}. {SANDBOX_ADVICE}")
        print(f"posenc-grader: running without a sandbox: {problem}", file=sys.stderr)
    problem = limit_memory(memory_mb)
    if problem:
        print(f"posenc-grader: {problem}", file=sys.stderr)
    sys.argv = ["ipykernel_launcher", *kernel_args]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
