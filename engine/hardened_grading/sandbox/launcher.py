"""The grading kernel's launcher: outside the sandbox it enters it (bwrap); inside, it sets the limits and starts ipykernel.

Started by :data:`hardened_grading.sandbox.command.LAUNCH`, never with ``python -m`` (see there why).
"""

import logging
import os
import runpy
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SandboxError
from ..untrusted.terminal import capture_output
from .bwrap import enter_sandbox
from .inside import apply_limits
from .limits import SANDBOX_MODES, Limits, limit_memory
from .parent import bind_to_grader
from .probe import SANDBOX_ADVICE, UNSANDBOXED_MEANS, sandbox_problem


@dataclass
class Options:
    """The grading kernel's own command-line options (the rest go to ipykernel)."""

    mode: str = "require"  #: --sandbox=: one of SANDBOX_MODES
    limits: Limits = Limits()  #: --limits=
    grader: int = None  #: --grader-pid=: the grading process, which this kernel must not outlive
    read_only: list = field(default_factory=list)  #: --read-only=PATH, repeated: more paths bound read-only
    #: --inherit-env=PATTERN, repeated: the grader's variables that reach the sandboxed kernel (sandbox_environment)
    inherit: list = field(default_factory=list)
    #: --student-folder=PATH: where the working folder (a staging folder) is bound, for a kernel started ahead
    student_folder: str = None
    rest: list = field(default_factory=list)  #: ipykernel's arguments


def parse_options(argv):
    """The :class:`Options` of the kernel's command line; exit with a message on a bad one."""
    options = Options()
    for arg in argv:
        name, _, value = arg.partition("=")
        if name == "--grader-pid":
            if not value.isdigit():
                sys.exit(f"hardened_grading kernel: {arg}: expected the grading process's pid")
            options.grader = int(value)
        elif name == "--sandbox":
            if value not in SANDBOX_MODES:
                sys.exit(f"hardened_grading kernel: --sandbox={value}: it must be one of {', '.join(SANDBOX_MODES)}")
            options.mode = value
        elif name == "--limits":
            try:
                options.limits = Limits.parse(value)
            except ValueError as error:
                sys.exit(f"hardened_grading kernel: {error}")
        elif name == "--read-only":
            options.read_only.append(value)
        elif name == "--inherit-env":
            options.inherit.append(value)
        elif name == "--student-folder":
            options.student_folder = value
        else:
            options.rest.append(arg)
    return options


#: What ipykernel logs as an ERROR when an interrupt reaches it between cells (kernelbase.dispatch_shell).
INTERRUPT_CAUGHT = "KeyboardInterrupt caught in kernel"


class _GraderInterruptFilter(logging.Filter):
    """Drops ipykernel's ``ERROR | KeyboardInterrupt caught in kernel.``, which means nothing to the instructor.

    Nobody presses Ctrl-C in a grading kernel: its interrupts are the grader's. jupyter_client interrupts
    every kernel it shuts down (``shutdown_kernel``: interrupt, then the shutdown request), and the grader
    interrupts a call of the tests that runs over time (its timeout is recorded in the graded notebook).
    When such an interrupt lands while the kernel handles a message rather than runs a cell, ipykernel
    logs this line on the grader's terminal, at random. Only this one message of the kernel is dropped.
    """

    def filter(self, record):
        return not (record.levelno == logging.ERROR and str(record.msg).startswith(INTERRUPT_CAUGHT))


def without_debugger():
    """Start ipykernel without its debugger: nobody debugs a grading kernel, and importing debugpy (pydevd) is
    about a fifth of the CPU time of a kernel's start. ipykernel runs without it when ``debugpy`` cannot be
    imported (``ipykernel.debugger._is_debugpy_available``); a student's ``import debugpy`` fails too."""
    sys.modules["debugpy"] = None


def main():
    options = parse_options(sys.argv[1:])
    mode, limits, kernel_args = options.mode, options.limits, options.rest
    sandboxed = bool(os.environ.get("HARDENED_GRADING_IN_SANDBOX"))
    if not sandboxed:
        bind_to_grader(options.grader)
        # what the kernel writes to its own stdout and stderr reaches the grader's escaped, and capped
        capture_output(limit=limits.kernel_log_kb * 1024)
    # ipykernel's application and kernel log through the logger named after IPKernelApp
    logging.getLogger("IPKernelApp").addFilter(_GraderInterruptFilter())
    if mode != "off" and not sandboxed:
        # A grader that gives its pid has probed once for its whole run (grading._sandbox_problem), and asks
        # for the sandbox only if it found it: no probe per kernel.
        problem = None if options.grader is not None else sandbox_problem()
        if problem is None:
            try:
                enter_sandbox(options, Path.cwd())  # does not return
            except SandboxError as error:
                problem = str(error)
        if mode == "require":
            sys.exit(f"hardened_grading kernel: not started: {problem}. {SANDBOX_ADVICE}")
        print(f"hardened_grading kernel: running without a sandbox: {problem}; {UNSANDBOXED_MEANS}", file=sys.stderr)
    for problem in apply_limits(limits) if sandboxed else [limit_memory(limits.memory_mb)]:
        if problem:
            print(f"hardened_grading kernel: {problem}", file=sys.stderr)
    if sandboxed:
        # Its parent is the sandbox's own init: no parent to poll (--die-with-parent ends it), and no
        # "Ctrl-C will not work" notice for the grader's terminal.
        kernel_args.append("--IPKernelApp.parent_handle=1")
        kernel_args.append("--IPKernelApp.exec_lines=__import__('hardened_grading.sandbox.inside').sandbox.inside"
                           f".limit_cpu_per_cell(get_ipython(), {limits.cpu_seconds_per_cell})")
    # No history file: not in the grader's ~/.ipython, and not filling the sandbox's /tmp.
    kernel_args.append("--HistoryManager.hist_file=:memory:")
    without_debugger()
    sys.argv = ["ipykernel_launcher", *kernel_args]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
