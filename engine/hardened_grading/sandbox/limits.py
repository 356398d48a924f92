"""What a grading kernel may use (:class:`Limits`), and the sandbox modes a grader may ask for."""

import resource
from dataclasses import asdict, dataclass, fields

# require: no sandbox, no kernel (grading a class); if-available: sandboxed where bubblewrap works,
# else plain (a course's own checker, on a learner's own notebook); off: never sandboxed (trusted submissions).
SANDBOX_MODES = ("require", "if-available", "off")


@dataclass(frozen=True)
class Limits:
    """What one grading kernel may use. The defaults are the course's; an instructor changes them with
    the ``ResilientExecute`` traitlets of the same names in ``nbgrader_config.py``. Honest work uses a
    small part of each: under 1 s of CPU per cell, about 20 threads, no files, under 200 MiB."""

    memory_mb: int = 3072  #: address space of each process (MiB): beyond it, MemoryError
    processes: int = 128  #: processes and threads in the sandbox, the kernel's own included
    cpu_seconds_per_cell: int = 60  #: CPU time one cell may use (a backstop to the wall-clock timeout)
    cpu_seconds_total: int = 900  #: CPU time the kernel and each process it starts may use in all
    file_mb: int = 64  #: the largest file a process may write (MiB): beyond it, OSError
    tmp_mb: int = 256  #: size of the private /tmp (MiB): beyond it, OSError (no space left)
    blas_threads: int = 1  #: threads numpy's BLAS (OpenBLAS, MKL, OpenMP) may use
    kernel_log_kb: int = 64  #: what the kernel writes to its own stdout and stderr that reaches the grader's (KiB)

    def argument(self):
        """The kernel's command-line argument that carries these limits."""
        return "--limits=" + ",".join(f"{name}={value}" for name, value in asdict(self).items())

    @classmethod
    def parse(cls, text):
        """The limits of a ``--limits=`` argument's value; the names it leaves out keep their defaults."""
        known = {f.name for f in fields(cls)}
        values = {}
        for item in filter(None, text.split(",")):
            name, _, value = item.partition("=")
            if name not in known or not value.isdigit() or int(value) < 1:
                raise ValueError(f"--limits: {item!r}: expected NAME=N with N >= 1, NAME one of {', '.join(sorted(known))}")
            values[name] = int(value)
        return cls(**values)


def limit_memory(megabytes):
    """Cap this process's address space; return None, or why it could not be done."""
    limit = int(megabytes) * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError) as error:  # macOS does not enforce RLIMIT_AS, and may refuse it
        return f"the kernel's memory limit could not be set on this platform ({error})"
    return None
