"""The grading kernel: an ordinary IPython kernel in a sandbox that sees and keeps only what it needs.

``nbgrader_config.py`` runs student code in the kernel ``hardened-grading``, whose command is the launcher
(:mod:`.launcher`, named by :class:`.kernelspec.GradingKernelSpecManager`). Started by the grader
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


Its modules, one concept each:

- :mod:`.limits`: what a kernel may use (:class:`~.limits.Limits`);
- :mod:`.probe`: whether a sandbox can be made here, found once per run, and the refusal to grade without one;
- :mod:`.bwrap`: the bubblewrap command, its read-only binds and the kernel's environment;
- :mod:`.cgroup`: the cap on processes, through a cgroup of the kernel's own;
- :mod:`.parent`: a kernel never outlives its grader;
- :mod:`.inside`: what the kernel sets up inside the sandbox (limits, CPU time per cell, strays ended);
- :mod:`.kernelspec` and :mod:`.command`: the kernel's spec, and the command that starts the launcher;
- :mod:`.launcher`: the launcher itself (outside the sandbox it enters it, inside it starts ipykernel);
- :mod:`.ahead`: the next submission's kernel, started while this one is graded (``hardened-grade``'s workers).

Nothing here is imported by ``import hardened_grading.sandbox``: the launcher starts twice per submission and
imports only what it needs.
"""
