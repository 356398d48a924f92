"""Every exception of the engine that a user (an instructor, a student reading feedback) can meet.

Each says what went wrong and what to do. They share one base, :class:`GradingError`::

    GradingError
    ├── SandboxError          a kernel's sandbox cannot be made (bubblewrap, a path, the connection file)
    │   └── SandboxUnavailable    ... and the sandbox is required (ResilientExecute.sandbox): nothing is graded
    ├── CPUTimeLimitExceeded  a cell used more CPU time than its limit (raised inside the kernel, shown in its cell)
    ├── SetupError            a set-up cell cannot run in the trusted judge (its tests run in the kernel)
    ├── UsageError            hardened-grade cannot run as asked
    └── UnsafeEntry           a path in a student's folder the grader refuses to open (also an OSError)
"""


class GradingError(Exception):
    """The base of the engine's exceptions a person reads."""


class SandboxError(GradingError, RuntimeError):
    """The sandbox cannot be made for this kernel; the message says why and what to do."""


class SandboxUnavailable(SandboxError):
    """The sandbox is required (``ResilientExecute.sandbox``) and cannot be made on this machine."""


class CPUTimeLimitExceeded(GradingError):
    """A cell used more CPU time than ``Limits.cpu_seconds_per_cell``."""


class SetupError(GradingError):
    """A set-up cell of the notebook cannot run in the grader (it uses an answer, or a file beside the
    notebook): its test cells must run in the kernel."""


class UsageError(GradingError):
    """The command cannot run as asked: the message says why and what to do."""


class UnsafeEntry(GradingError, OSError):
    """A path that the grader refuses to open: not a regular file with one link."""
