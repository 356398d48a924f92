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
