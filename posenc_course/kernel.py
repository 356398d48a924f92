"""The grading kernel: an ordinary IPython kernel, sandboxed and under a memory limit.

``nbgrader_config.py`` runs student code in the kernel spec ``posenc-grader``, whose command is
this module. It

- starts the kernel inside a bubblewrap sandbox (``bwrap``, Debian's ``bubblewrap``), when it is
  installed and ``POSENC_SANDBOX`` is not ``0``: the file system is read-only, and the course's
  private parts (``source/``, ``gradebook.db``, other students' submissions and graded notebooks,
  feedback, the tests and the reference package ``posenc_solutions``) are hidden, so student code
  can neither read them nor import the reference solutions;
- caps the kernel's address space (``POSENC_KERNEL_MEMORY_MB``, default 3072), so that a memory
  bomb raises ``MemoryError`` in the student's cell instead of exhausting the machine;
- then starts ipykernel as usual.

    python -m posenc_course.kernel install     # write the kernel spec into this environment
"""

import importlib.util
import json
import os
import resource
import runpy
import shutil
import sys
import tempfile
from pathlib import Path

KERNEL_NAME = "posenc-grader"
DEFAULT_MEMORY_MB = 3072


def limit_memory(megabytes):
    limit = int(megabytes) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


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


def course_root(start):
    """The nearest folder at or above `start` that holds an ``nbgrader_config.py``."""
    for folder in [start, *start.parents]:
        if (folder / "nbgrader_config.py").exists():
            return folder
    return None


def sandbox_command(cwd):
    """The ``bwrap`` arguments that hide the course's private parts from a kernel run in `cwd`."""
    scratch = tempfile.mkdtemp(prefix="posenc-kernel-")
    args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--die-with-parent",
            "--bind", "/tmp", "/tmp", "--setenv", "IPYTHONDIR", scratch, "--setenv", "MPLCONFIGDIR", scratch,
            "--setenv", "POSENC_IN_SANDBOX", "1"]
    root = course_root(cwd)
    # /tmp is writable, so the course, this package and the Python environment are made
    # read-only again in case they live under it.
    for path in {root, Path(__file__).resolve().parents[1], Path(sys.prefix).resolve()} - {None}:
        args += ["--ro-bind", str(path), str(path)]
    hidden = []
    if root is not None:
        hidden += [root / name for name in PRIVATE] + [root / "gradebook.db"]
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
    if root is not None and (root / "autograded") in cwd.parents:
        args += ["--bind", str(cwd), str(cwd)]
    return args + ["--chdir", str(cwd)]


def main():
    if sys.argv[1:2] == ["install"]:
        print(f"installed kernel spec {KERNEL_NAME} in {install()}")
        return
    if os.environ.get("POSENC_SANDBOX", "1") != "0" and not os.environ.get("POSENC_IN_SANDBOX"):
        if shutil.which("bwrap"):
            command = sandbox_command(Path.cwd()) + [sys.executable, "-m", "posenc_course.kernel", *sys.argv[1:]]
            os.execvp(command[0], command)
        print("posenc-grader: bwrap is not installed (apt-get install bubblewrap): the kernel runs "
              "without a sandbox", file=sys.stderr)
    limit_memory(os.environ.get("POSENC_KERNEL_MEMORY_MB", DEFAULT_MEMORY_MB))
    sys.argv[0] = "ipykernel_launcher"
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
