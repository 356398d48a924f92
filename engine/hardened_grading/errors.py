"""Every exception of the engine that a user (an instructor, a student reading feedback) can meet.

:class:`GradingError` is the base of those raised for a person to read; each says what went wrong and what to do.
"""


class SandboxError(RuntimeError):
    """The sandbox cannot be made for this kernel; the message says why and what to do."""


class CPUTimeLimitExceeded(Exception):
    """A cell used more CPU time than ``Limits.cpu_seconds_per_cell``."""


class SandboxUnavailable(RuntimeError):
    """The sandbox is required (``ResilientExecute.sandbox``) and cannot be made on this machine."""


class SetupError(Exception):
    """A set-up cell of the notebook cannot run in the grader (it uses an answer, or a file beside the
    notebook): its test cells must run in the kernel."""


class UsageError(Exception):
    """The command cannot run as asked: the message says why and what to do."""


class UnsafeEntry(OSError):
    """A path that the grader refuses to open: not a regular file with one link."""
