"""The grading kernel: an ordinary IPython kernel under a memory limit.

``nbgrader_config.py`` runs student code in the kernel spec ``posenc-grader``, whose command is
this module. It caps the kernel's address space (``POSENC_KERNEL_MEMORY_MB``, default 3072), so
that a memory bomb raises ``MemoryError`` in the student's cell instead of exhausting the
machine, then starts ipykernel as usual.

    python -m posenc_course.kernel install     # write the kernel spec into this environment
"""

import json
import os
import resource
import runpy
import sys
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
        "metadata": {"debugger": False},
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    return folder


def ensure_installed():
    """Install the kernel spec into this environment unless it is there already."""
    if not (Path(sys.prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME / "kernel.json").exists():
        install()


def main():
    if sys.argv[1:2] == ["install"]:
        print(f"installed kernel spec {KERNEL_NAME} in {install()}")
        return
    limit_memory(os.environ.get("POSENC_KERNEL_MEMORY_MB", DEFAULT_MEMORY_MB))
    sys.argv[0] = "ipykernel_launcher"
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
